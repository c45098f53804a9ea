// Mip tails in the streamer: a texture's tail is made resident when the texture is added and
// stays pinned for the streamer's life. With packing (StreamerSettings::pack_tails) a tail is
// written after the tails already in a tail page with room for it; otherwise, or when none has
// room, it takes a page of its own, whose room later tails may take.
//
// Lock: mutex_ (rank streamer_api, taken first of the streamer's) serializes adding textures:
// the tail pages with room, the device context of add_texture's fills.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "base/ranked_mutex.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

// The bytes of a texture's mip tail: a tile for each level from tail_first_mip on.
std::uint64_t tail_bytes(const TextureLayout& layout);
// Whether a tail page with `used` bytes taken has room for a tail of `bytes`; a page without
// room for the smallest tile is full (and offers no room).
bool tail_page_has_room(std::uint64_t used, std::uint64_t bytes);
bool tail_page_full(std::uint64_t used);

// Fills a page from `source` through host memory: in place on the host backend, through
// staging and a copy on a GPU (a source without a device fill).
void fill_page_on_host(Backend& backend, bool gpu, const TileSource& source,
                       std::uint64_t layout_page, DeviceAddress data);

class TailPlacement {
public:
    using AddLock = std::unique_lock<detail::RankedMutex>;

    TailPlacement(Backend& backend, bool pack, bool gpu, int device);
    ~TailPlacement();

    // Serializes adding textures: every call below takes the guard.
    AddLock lock();
    // Writes the tail of `tail` (texture `texture` of `layout`) into a tail page with room; the
    // ready event's page, or nullopt when none has room. A failed fill throws.
    std::optional<StreamedPage> pack(const AddLock&, TextureId texture, const TextureLayout& layout,
                                     PageIndex tail, const TileSource& source);
    // Fills a tail page of its own (`page`, committed pinned) and, with packing, offers the
    // room after its tail to later tails. A failed fill throws.
    void fill_own(const AddLock&, const TextureLayout& layout, const StreamedPage& page,
                  const TileSource& source);

private:
    struct TailHost {
        StreamedPage page;
        std::uint64_t used = 0;  // bytes from the page's start
    };

    Backend& backend_;
    const bool pack_;
    const bool gpu_;
    const int device_;
    detail::RankedMutex mutex_{detail::LockRank::streamer_api, "streamer tails"};
    std::vector<TailHost> hosts_;                      // guarded by mutex_
    std::unique_ptr<DeviceFillContext> fill_context_;  // guarded by mutex_
};

}  // namespace vtpage::vt::streamer_detail
