// Counts the pages that textures pin (vtpage/streaming/layout/pinned_pages.hpp) as they are added:
// tails packed first-fit as TailPlacement packs them, and the shapes of their packed coarse levels.
// Not thread-safe: the streamer's add lock (TailPlacement::AddLock) guards its tally.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "streaming/streamer/packed_level_pool.hpp"
#include "vtpage/streaming/layout/pinned_pages.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt::streamer_detail {

// The pages of packed levels a budget allows (StreamerSettings::packed_level_pages, 0: a
// quarter of the budget).
std::size_t level_page_cap(std::size_t packed_level_pages, std::size_t budget_pages);

class PinnedTally {
public:
    PinnedTally(bool pack_tails, bool pack_levels)
        : pack_tails_(pack_tails), pack_levels_(pack_levels) {}

    void add(const TextureLayout& layout);
    // What the textures added so far pin, and what they would with `layout` too.
    PinnedPages now(std::size_t level_cap) const;
    PinnedPages with(const TextureLayout& layout, std::size_t level_cap) const;

private:
    bool tail_fits_in_a_page(std::uint64_t bytes) const;
    std::size_t new_shapes(const TextureLayout& layout) const;

    bool pack_tails_;
    bool pack_levels_;
    std::size_t tail_pages_ = 0;
    std::vector<std::uint64_t> tail_room_used_;  // bytes used of the tail pages with room left
    std::set<LevelShape> shapes_;
};

}  // namespace vtpage::vt::streamer_detail
