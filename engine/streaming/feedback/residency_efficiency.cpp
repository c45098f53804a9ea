#include "vtpage/streaming/feedback/residency_efficiency.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "vtpage/streaming/layout/feedback_entry.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {

namespace {

// The tiles a ready page holds: a packed level all of its level's, a page its share of the
// level's tile grid (fewer at the level's right and bottom edges; one tile in a tile level).
struct TileRect {
    std::uint32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    std::uint64_t count() const { return std::uint64_t(x1 - x0) * (y1 - y0); }
};

TileRect tiles_of(const TextureLayout& layout, const StreamedPage& page) {
    const MipLevel& level = layout.mips[page.mip];
    if (page.packed() && !layout.tile_level(page.mip)) return {0, 0, level.tiles_x, level.tiles_y};
    const PagePosition at = page_position(layout, page.layout_page);
    const std::uint32_t x0 = at.x * level.page_tiles_x, y0 = at.y * level.page_tiles_y;
    return {x0, y0, std::min(x0 + level.page_tiles_x, level.tiles_x),
            std::min(y0 + level.page_tiles_y, level.tiles_y)};
}

std::uint64_t tile_key(TextureId texture, std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
    const FeedbackEntry entry = FeedbackEntry::make({texture, mip, x, y});
    return std::uint64_t(entry.texture_mip) << 32 | entry.tile_xy;
}

}  // namespace

ResidencyEfficiency::ResidencyEfficiency(std::uint32_t window_frames)
    : window_(std::max<std::uint32_t>(window_frames, 1)) {}

const ResidencySample& ResidencyEfficiency::measure_when_due(const Streamer& streamer) {
    if (since_measured_ >= window_) last_ = measure(streamer);
    return last_;
}

ResidencySample ResidencyEfficiency::measure(const Streamer& streamer) {
    since_measured_ = 0;
    const std::uint64_t oldest = added_ >= window_ ? added_ - window_ + 1 : 0;
    std::erase_if(asked_, [&](const auto& entry) { return entry.second < oldest; });
    ResidencySample sample{.frame = newest_};
    // Layouts looked up once a texture (the set hands out copies, under its lock).
    const TextureSet& textures = streamer.textures();
    std::vector<std::optional<TextureLayout>> layouts(textures.texture_count());
    const auto layout_of = [&](TextureId texture) -> const TextureLayout& {
        std::optional<TextureLayout>& layout = layouts[texture];
        if (!layout) layout = textures.layout(texture);
        return *layout;
    };
    for (const auto& [key, added] : asked_) {
        const TileId tile = FeedbackEntry{std::uint32_t(key >> 32), std::uint32_t(key)}.tile();
        if (tile.texture >= layouts.size()) continue;
        const TextureLayout& layout = layout_of(tile.texture);
        if (!layout.has_tile(tile.mip, tile.x, tile.y) || layout.in_tail(tile.mip)) continue;
        ++sample.asked_tiles;
        sample.tile_granular_bytes += layout.tile_format().tile_bytes();
    }
    for (const StreamedPage& page : streamer.ready_pages()) {
        if (page.texture >= layouts.size()) continue;  // added since the set was read
        const TextureLayout& layout = layout_of(page.texture);
        if (page.layout_page == layout.tail_page()) continue;
        const TileRect rect = tiles_of(layout, page);
        const std::uint64_t bytes =
            page.packed() ? rect.count() * layout.tile_format().tile_bytes() : page_bytes;
        std::uint64_t sampled = 0;
        for (std::uint32_t y = rect.y0; y < rect.y1; ++y) {
            for (std::uint32_t x = rect.x0; x < rect.x1; ++x) {
                sampled += asked_.count(tile_key(page.texture, page.mip, x, y));
            }
        }
        sample.resident_tiles += rect.count();
        sample.resident_bytes += bytes;
        sample.sampled_tiles += sampled;
        if (sampled > 0) {
            sample.in_use_tiles += rect.count();
            sample.in_use_bytes += bytes;
        }
    }
    return sample;
}

}  // namespace vtpage::vt
