#include "streaming/streamer/pinned_tally.hpp"

#include <algorithm>

#include "streaming/streamer/tail_placement.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

namespace {

std::vector<LevelShape> level_shapes(const TextureLayout& layout) {
    std::vector<LevelShape> shapes;
    for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
        if (auto shape = PackedLevelPool::packable(layout, mip)) shapes.push_back(*shape);
    }
    return shapes;
}

}  // namespace

std::size_t level_page_cap(std::size_t packed_level_pages, std::size_t budget_pages) {
    return packed_level_pages > 0 ? packed_level_pages : std::max<std::size_t>(1, budget_pages / 4);
}

bool PinnedTally::tail_fits_in_a_page(std::uint64_t bytes) const {
    return std::any_of(tail_room_used_.begin(), tail_room_used_.end(),
                       [&](std::uint64_t used) { return tail_page_has_room(used, bytes); });
}

std::size_t PinnedTally::new_shapes(const TextureLayout& layout) const {
    if (!pack_levels_) return 0;
    std::set<LevelShape> fresh;
    for (const LevelShape& shape : level_shapes(layout)) {
        if (!shapes_.count(shape)) fresh.insert(shape);
    }
    return fresh.size();
}

void PinnedTally::add(const TextureLayout& layout) {
    const std::uint64_t bytes = tail_bytes(layout);
    auto room = std::find_if(tail_room_used_.begin(), tail_room_used_.end(),
                             [&](std::uint64_t used) { return tail_page_has_room(used, bytes); });
    if (pack_tails_ && room != tail_room_used_.end()) {
        *room += bytes;
        if (tail_page_full(*room)) tail_room_used_.erase(room);
    } else {
        ++tail_pages_;
        if (pack_tails_ && !tail_page_full(bytes)) tail_room_used_.push_back(bytes);
    }
    if (pack_levels_) {
        for (const LevelShape& shape : level_shapes(layout)) shapes_.insert(shape);
    }
}

PinnedPages PinnedTally::now(std::size_t level_cap) const {
    return {tail_pages_, std::min(shapes_.size(), level_cap)};
}

PinnedPages PinnedTally::with(const TextureLayout& layout, std::size_t level_cap) const {
    PinnedPages pages = now(level_cap);
    if (!pack_tails_ || !tail_fits_in_a_page(tail_bytes(layout))) ++pages.tail_pages;
    pages.level_pages = std::min(shapes_.size() + new_shapes(layout), level_cap);
    return pages;
}

}  // namespace vtpage::vt::streamer_detail

namespace vtpage::vt {

PinnedPages pinned_pages(std::span<const TextureLayout> layouts, const StreamerSettings& settings) {
    streamer_detail::PinnedTally tally(settings.pack_tails, settings.pack_levels);
    for (const TextureLayout& layout : layouts) tally.add(layout);
    const std::size_t budget_pages =
        std::max<std::size_t>(1, settings.table.budget_bytes / page_bytes);
    return tally.now(streamer_detail::level_page_cap(settings.packed_level_pages, budget_pages));
}

}  // namespace vtpage::vt
