#include "vtpage/streaming/feedback/feedback_processor.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace vtpage::vt {

bool higher_priority(const PageRequest& a, const PageRequest& b) noexcept {
    if (a.mip != b.mip) return a.mip > b.mip;
    if (a.count != b.count) return a.count > b.count;
    return a.page < b.page;
}

FeedbackProcessor::FeedbackProcessor(const TextureSet& textures, FeedbackSettings settings)
    : textures_(textures),
      settings_(settings),
      infos_(std::make_shared<const std::vector<TextureInfo>>()) {}

FeedbackResult FeedbackProcessor::process(std::span<const FeedbackEntry> entries) const {
    FeedbackScratch scratch;
    FeedbackResult result;
    process(entries, scratch, result);
    return result;
}

namespace {

bool same_entry(const FeedbackEntry& a, const FeedbackEntry& b) noexcept {
    return a.texture_mip == b.texture_mip && a.tile_xy == b.tile_xy;
}

// Whether the 8 entries from `at` all equal `entry`: written without an early exit, so that the
// compiler compares them at once.
bool block_of_8_same(const FeedbackEntry* at, const FeedbackEntry& entry) noexcept {
    std::uint32_t differ = 0;
    for (int i = 0; i < 8; ++i)
        differ |= (at[i].texture_mip ^ entry.texture_mip) | (at[i].tile_xy ^ entry.tile_xy);
    return differ == 0;
}

// Calls f(entry, length) for each run of equal entries. Neighbouring pixels mostly sample the
// same tile (runs of about 50 on the 1,050-texture set's views), so a run is skipped 8 entries
// at a time: the scan of a 480 x 270 feedback was most of a frame's processing.
template <typename F>
void for_each_run(std::span<const FeedbackEntry> entries, F&& f) {
    const std::size_t n = entries.size();
    std::size_t i = 0;
    while (i < n) {
        const FeedbackEntry& entry = entries[i];
        std::size_t end = i + 1;
        while (end + 8 <= n && block_of_8_same(&entries[end], entry)) end += 8;
        while (end < n && same_entry(entries[end], entry)) ++end;
        f(entry, end - i);
        i = end;
    }
}

void count_tiles(std::span<const FeedbackEntry> entries, FeedbackScratch& scratch,
                 FeedbackResult& result) {
    auto& tiles = scratch.tiles;
    tiles.clear();
    for_each_run(entries, [&](const FeedbackEntry& entry, std::size_t length) {
        if (entry.is_empty()) return;
        result.samples += length;
        tiles[std::uint64_t(entry.texture_mip) << 32 | entry.tile_xy] += std::uint32_t(length);
    });
}

}  // namespace

FeedbackProcessor::Infos FeedbackProcessor::infos() const {
    const std::size_t texture_count = textures_.texture_count();
    std::lock_guard lock(infos_mutex_);
    if (infos_->size() < texture_count) {
        auto grown = std::make_shared<std::vector<TextureInfo>>(*infos_);
        for (std::size_t id = grown->size(); id < texture_count; ++id)
            grown->push_back(textures_.info(TextureId(id)));
        infos_ = std::move(grown);
    }
    return infos_;
}

void FeedbackProcessor::process(std::span<const FeedbackEntry> entries, FeedbackScratch& scratch,
                                FeedbackResult& result) const {
    std::vector<PageRequest> requests = std::move(result.requests);
    requests.clear();
    result = FeedbackResult{};
    result.requests = std::move(requests);
    count_tiles(entries, scratch, result);
    count_pages(*infos(), scratch, result);
    order_requests(scratch, result);
}

// Pages, with the counts of the tiles in them.
void FeedbackProcessor::count_pages(const std::vector<TextureInfo>& infos, FeedbackScratch& scratch,
                                    FeedbackResult& result) const {
    auto& pages = scratch.pages;
    pages.clear();
    for (const auto& [key, count] : scratch.tiles) {
        const TileId tile = FeedbackEntry{std::uint32_t(key >> 32), std::uint32_t(key)}.tile();
        if (tile.texture >= infos.size()) {
            result.invalid += count;
            continue;
        }
        const TextureInfo& info = infos[tile.texture];
        const TextureLayout& layout = info.layout;
        if (!layout.has_tile(tile.mip, tile.x, tile.y)) {
            result.invalid += count;
            continue;
        }
        if (layout.in_tail(tile.mip)) {
            result.tail_samples += count;
            continue;
        }
        count_page_and_parents(info, tile, count, pages);
        if (settings_.tile_neighbours && layout.tile_level(tile.mip))
            count_neighbours(info, tile, pages);
    }
}

// The tile's page, then the pages that cover the tile's centre at each coarser level up to (not
// including) the tail, each counted: the levels a sample there falls back to.
void FeedbackProcessor::count_page_and_parents(const TextureInfo& info, const TileId& tile,
                                               std::uint32_t count,
                                               FeedbackScratch::PageCounts& pages) const {
    const TextureLayout& layout = info.layout;
    const std::uint32_t payload = layout.tile_format().tile_payload();
    const MipLevel& level = layout.mips[tile.mip];
    const std::uint32_t x = page_centre_texel(tile.x, 1, payload, level.width);
    const std::uint32_t y = page_centre_texel(tile.y, 1, payload, level.height);
    const std::uint32_t last_mip = settings_.include_parents ? layout.tail_first_mip : tile.mip + 1;
    for (std::uint32_t mip = tile.mip; mip < last_mip; ++mip) {
        const std::uint64_t page = covering_page(layout, tile.mip, x, y, mip);
        auto [it, inserted] = pages.try_emplace(info.base_page + page,
                                                FeedbackScratch::Counted{tile.texture, mip, 0});
        it->second.count += count;
    }
}

// In a tile level, the 8 tiles around a sampled one, each counted once.
void FeedbackProcessor::count_neighbours(const TextureInfo& info, const TileId& tile,
                                         FeedbackScratch::PageCounts& pages) const {
    const TextureLayout& layout = info.layout;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            const std::uint32_t nx = tile.x + std::uint32_t(dx);  // wraps past 0: no tile
            const std::uint32_t ny = tile.y + std::uint32_t(dy);
            if ((dx == 0 && dy == 0) || !layout.has_tile(tile.mip, nx, ny)) continue;
            const std::uint64_t page = layout.locate(tile.mip, nx, ny).page;
            auto [it, inserted] = pages.try_emplace(
                info.base_page + page, FeedbackScratch::Counted{tile.texture, tile.mip, 0});
            if (inserted) it->second.count = 1;
        }
    }
}

void FeedbackProcessor::order_requests(const FeedbackScratch& scratch,
                                       FeedbackResult& result) const {
    result.requests.reserve(scratch.pages.size());
    for (const auto& [page, counted] : scratch.pages) {
        result.requests.push_back(
            {page, counted.texture, counted.mip,
             std::uint32_t(std::min<std::uint64_t>(counted.count, UINT32_MAX))});
    }
    const std::size_t keep = std::min(settings_.max_requests, result.requests.size());
    result.dropped = result.requests.size() - keep;
    std::partial_sort(result.requests.begin(), result.requests.begin() + std::ptrdiff_t(keep),
                      result.requests.end(), higher_priority);
    result.requests.resize(keep);
}

}  // namespace vtpage::vt
