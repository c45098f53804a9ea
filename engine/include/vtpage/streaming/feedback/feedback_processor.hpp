// Turns the renderer's feedback (one FeedbackEntry per sampled pixel: which tile of which mip of
// which texture it wanted) into page requests for the streamer:
//   - unique pages, each with how many samples asked for it;
//   - each page's parents (the pages of coarser mips covering the same area, up to but not
//     including the always-resident mip tail), counted with the samples of their children, so
//     that a coarser fallback arrives first;
//   - ordered coarse first (higher mip first), then by count (more first), then by page;
//   - at most max_requests per call: the finest, least asked-for pages are dropped first.
// Entries that are empty are skipped; entries naming an unknown texture, a mip or a tile
// outside the texture are counted as invalid and skipped (the GPU may write garbage while a
// texture is being added or the feedback buffer resized).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "vtpage/streaming/layout/feedback_entry.hpp"
#include "vtpage/streaming/sources/page_request.hpp"
#include "vtpage/streaming/sources/texture_set.hpp"

namespace vtpage::vt {

struct FeedbackSettings {
    std::size_t max_requests = 4096;  // per process() call (per frame)
    bool include_parents = true;
    // In tile levels (TextureShape::tile_levels) ask for the 8 tiles around each sampled one
    // too, each counted once (after the sampled tiles of its level): a page of 32 tiles brings
    // the tiles around a sampled one with it, which a view moving over the texture then finds
    // resident, and a tile brings only itself.
    bool tile_neighbours = true;
};

struct FeedbackResult {
    std::vector<PageRequest> requests;  // in priority order, at most max_requests
    std::size_t samples = 0;            // non-empty entries
    std::size_t invalid = 0;            // entries skipped as invalid
    std::size_t tail_samples = 0;       // samples of tail mips (always resident: no request)
    std::size_t dropped = 0;            // unique pages beyond max_requests
};

// What process() builds on the way, kept by a caller that processes feedback every frame so that
// its tables are not allocated and freed each time (large ones are mapped and unmapped, and
// unmapping interrupts every core the process runs on).
struct FeedbackScratch {
    struct Counted {
        TextureId texture = 0;
        std::uint32_t mip = 0;
        std::uint64_t count = 0;
    };
    using PageCounts = std::unordered_map<PageIndex, Counted>;
    std::unordered_map<std::uint64_t, std::uint32_t> tiles;
    PageCounts pages;
};

class FeedbackProcessor {
public:
    explicit FeedbackProcessor(const TextureSet& textures, FeedbackSettings settings = {});

    FeedbackResult process(std::span<const FeedbackEntry> entries) const;
    // The same into `result` (its requests' capacity reused), with the caller's scratch.
    void process(std::span<const FeedbackEntry> entries, FeedbackScratch& scratch,
                 FeedbackResult& result) const;
    const FeedbackSettings& settings() const noexcept { return settings_; }

private:
    using Infos = std::shared_ptr<const std::vector<TextureInfo>>;
    // The set's textures, each copied once, as it is added (a set only grows, and a texture's
    // info never changes): copying 1,050 of them every frame took a tenth of a millisecond.
    Infos infos() const;
    void count_pages(const std::vector<TextureInfo>& infos, FeedbackScratch& scratch,
                     FeedbackResult& result) const;
    void count_page_and_parents(const TextureInfo& info, const TileId& tile, std::uint32_t count,
                                FeedbackScratch::PageCounts& pages) const;
    void count_neighbours(const TextureInfo& info, const TileId& tile,
                          FeedbackScratch::PageCounts& pages) const;
    void order_requests(const FeedbackScratch& scratch, FeedbackResult& result) const;

    const TextureSet& textures_;
    FeedbackSettings settings_;
    mutable std::mutex infos_mutex_;  // guards infos_ (the vector it points to never changes)
    mutable Infos infos_;
};

}  // namespace vtpage::vt
