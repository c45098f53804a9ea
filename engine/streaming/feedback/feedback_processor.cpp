#include "vtpage/streaming/feedback/feedback_processor.hpp"

#include <algorithm>
#include <unordered_map>

namespace vtpage::vt {

bool higher_priority(const PageRequest& a, const PageRequest& b) noexcept {
    if (a.mip != b.mip) return a.mip > b.mip;
    if (a.count != b.count) return a.count > b.count;
    return a.page < b.page;
}

FeedbackProcessor::FeedbackProcessor(const TextureSet& textures, FeedbackSettings settings)
    : textures_(textures), settings_(settings) {}

FeedbackResult FeedbackProcessor::process(std::span<const FeedbackEntry> entries) const {
    FeedbackScratch scratch;
    FeedbackResult result;
    process(entries, scratch, result);
    return result;
}

void FeedbackProcessor::process(std::span<const FeedbackEntry> entries, FeedbackScratch& scratch,
                                FeedbackResult& result) const {
    std::vector<PageRequest> requests = std::move(result.requests);
    requests.clear();
    result = FeedbackResult{};
    result.requests = std::move(requests);
    // Tiles first (neighbouring pixels mostly repeat an entry: count runs before hashing).
    auto& tiles = scratch.tiles;
    tiles.clear();
    std::uint64_t run_key = 0;
    std::uint32_t run = 0;
    auto flush = [&] {
        if (run > 0) tiles[run_key] += run;
        run = 0;
    };
    for (const FeedbackEntry& entry : entries) {
        if (entry.is_empty()) continue;
        ++result.samples;
        const std::uint64_t key = std::uint64_t(entry.texture_mip) << 32 | entry.tile_xy;
        if (run > 0 && key == run_key) {
            ++run;
            continue;
        }
        flush();
        run_key = key;
        run = 1;
    }
    flush();

    // Then pages, with the counts of the tiles in them.
    const std::size_t texture_count = textures_.texture_count();
    auto& infos = scratch.infos;
    infos.clear();
    infos.reserve(texture_count);
    for (TextureId id = 0; id < texture_count; ++id) infos.push_back(textures_.info(id));
    using Counted = FeedbackScratch::Counted;
    auto& pages = scratch.pages;
    pages.clear();
    for (const auto& [key, count] : tiles) {
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
        // The tile's page, then the pages that cover the tile's centre at each coarser level
        // up to (not including) the tail, each counted: the levels a sample there falls back to.
        const std::uint32_t payload = layout.tile_format().tile_payload();
        const MipLevel& level = layout.mips[tile.mip];
        const std::uint32_t x = page_centre_texel(tile.x, 1, payload, level.width);
        const std::uint32_t y = page_centre_texel(tile.y, 1, payload, level.height);
        const std::uint32_t last_mip =
            settings_.include_parents ? layout.tail_first_mip : tile.mip + 1;
        for (std::uint32_t mip = tile.mip; mip < last_mip; ++mip) {
            const std::uint64_t page = covering_page(layout, tile.mip, x, y, mip);
            auto [it, inserted] =
                pages.try_emplace(info.base_page + page, Counted{tile.texture, mip, 0});
            it->second.count += count;
        }
        if (settings_.tile_neighbours && layout.tile_level(tile.mip)) {
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    const std::uint32_t nx = tile.x + std::uint32_t(dx);  // wraps past 0: no tile
                    const std::uint32_t ny = tile.y + std::uint32_t(dy);
                    if ((dx == 0 && dy == 0) || !layout.has_tile(tile.mip, nx, ny)) continue;
                    const std::uint64_t page = layout.locate(tile.mip, nx, ny).page;
                    auto [it, inserted] = pages.try_emplace(info.base_page + page,
                                                            Counted{tile.texture, tile.mip, 0});
                    if (inserted) it->second.count = 1;
                }
            }
        }
    }

    result.requests.reserve(pages.size());
    for (const auto& [page, counted] : pages) {
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
