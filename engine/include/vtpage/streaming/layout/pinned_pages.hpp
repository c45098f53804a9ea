// What textures pin in a streamer before any of their pages is asked for, so that an app (and
// the streamer itself) can tell at once whether a set of textures fits a budget at all:
//   - their mip tails, packed into shared pages as Streamer::add_texture packs them;
//   - with packed coarse levels, one page for each shape of level they have (at most the
//     levels' share of the budget): the least the level pool holds once such a level is
//     requested. More level pages are taken while there is room, and given back when the
//     budget is lowered.
// The streamer refuses a texture, or a lowered budget, that would leave the pinned pages over
// the budget (budget_exhausted, out_of_range), with these numbers in the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt {

struct StreamerSettings;

struct PinnedPages {
    std::size_t tail_pages = 0;
    std::size_t level_pages = 0;
    std::size_t total() const noexcept { return tail_pages + level_pages; }
    std::uint64_t bytes() const noexcept { return std::uint64_t(total()) * page_bytes; }
};

// The pages that textures of these layouts pin in a streamer with these settings (its
// pack_tails, pack_levels, packed_level_pages and table.budget_bytes).
PinnedPages pinned_pages(std::span<const TextureLayout> layouts, const StreamerSettings& settings);

}  // namespace vtpage::vt
