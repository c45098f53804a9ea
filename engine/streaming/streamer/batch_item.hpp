// What the streamer's parts hand each other: a pending request's key, and a page of a batch on
// its way from commit (or placing) to ready, with its route and its state spelt out.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "streaming/streamer/packed_level_pool.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/sources/texture_set.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

// Pending requests in priority order: coarse first, then count, then first asked.
struct PendingKey {
    std::uint32_t mip = 0;
    std::uint32_t count = 0;
    std::uint64_t sequence = 0;
    PageIndex page = 0;
    // The newest frame whose request asked for the page (0: no frame begun); not part of the
    // order. A packed level takes no place from a level wanted in that frame or later.
    FrameId asked_in = 0;
    bool operator<(const PendingKey& other) const {
        if (mip != other.mip) return mip > other.mip;
        if (count != other.count) return count > other.count;
        return sequence < other.sequence;
    }
};

// A page stored in a file, whichever texture reads it: instances of one file share theirs.
struct StoredPageId {
    std::uint64_t device = 0, inode = 0, offset = 0;
    bool operator==(const StoredPageId&) const = default;
};
struct StoredPageIdHash {
    std::size_t operator()(const StoredPageId& id) const noexcept;
};

// Where a source stores a page, and which stored page it is.
struct StoredPage {
    StoredPageRead read;
    StoredPageId id;
};
// nullopt for pages not stored in a file (or that cannot be located: the source's own fill
// reports what is wrong).
std::optional<StoredPage> stored_page_of(const TileSource* source, std::uint64_t layout_page);

// How a batch item's bytes arrive. Each route has one finisher (BatchFinisher).
enum class BatchRoute : std::uint8_t {
    host_fill,     // the source fills the page in host memory (or staging, then a copy)
    device_fill,   // the source fills the page on the worker's CUDA stream
    stored_page,   // read from a file, decoded and copied by the page loader
    packed_level,  // a coarse level written into its place in a host page (from a source)
};

enum class BatchState : std::uint8_t {
    placed,   // committed (or given a place), pinned, not filled yet
    filling,  // handed to a device stream or the loader
    filled,   // its bytes are in place (or enqueued, with a fence)
    failed,   // its fill failed: reported as failed, never ready
};

struct BatchItem {
    PendingKey key;
    PageMapping mapping;
    PageOwner owner;
    std::shared_ptr<const TileSource> source;
    StreamedPage page;
    BatchRoute route = BatchRoute::host_fill;
    BatchState state = BatchState::placed;
    std::optional<StoredPage> stored;  // stored_page: where, and which
    std::optional<LevelPlace> place;   // packed_level, or a stored page that is a level
    bool failed() const noexcept { return state == BatchState::failed; }
    // Its bytes may still be written by device work (a stream or the loader's copies).
    bool on_device() const noexcept {
        return route == BatchRoute::device_fill ||
               (route == BatchRoute::stored_page && device_copy);
    }
    bool device_copy = false;  // stored_page: the loader's copy runs on a stream
};

}  // namespace vtpage::vt::streamer_detail
