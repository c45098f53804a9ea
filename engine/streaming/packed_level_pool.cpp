#include "packed_level_pool.hpp"

#include <algorithm>

namespace vtpage::vt {

namespace {

// The tiles a level of `shape` covers when placed at tile 0: bit y * page_tiles_x + x.
std::uint64_t level_mask(LevelShape shape, const TileFormatInfo& info) {
    std::uint64_t mask = 0;
    for (std::uint32_t y = 0; y < shape.tiles_y; ++y) {
        for (std::uint32_t x = 0; x < shape.tiles_x; ++x) {
            mask |= std::uint64_t(1) << (y * info.page_tiles_x + x);
        }
    }
    return mask;
}

// The tile after a level's last one, placed at tile 0.
std::uint32_t level_span_tiles(LevelShape shape, const TileFormatInfo& info) {
    return (shape.tiles_y - 1) * info.page_tiles_x + shape.tiles_x;
}

}  // namespace

std::optional<LevelShape> PackedLevelPool::packable(const TextureLayout& layout,
                                                    std::uint32_t mip) {
    if (mip >= layout.tail_first_mip || mip >= max_mips) return std::nullopt;
    const MipLevel& level = layout.mips[mip];
    if (level.pages_x != 1 || level.pages_y != 1) return std::nullopt;
    const LevelShape shape{layout.format, level.tiles_x, level.tiles_y};
    if (places_of(shape).size() < 2) return std::nullopt;
    return shape;
}

std::vector<std::uint32_t> PackedLevelPool::places_of(LevelShape shape) {
    const TileFormatInfo info = tile_format_info(shape.format);
    const std::uint32_t tiles = info.tiles_per_page();
    std::vector<std::uint32_t> places;
    if (shape.tiles_x == 0 || shape.tiles_y == 0 || shape.tiles_x > info.page_tiles_x ||
        shape.tiles_y > info.page_tiles_y || tiles > 64) {
        return places;
    }
    const std::uint64_t mask = level_mask(shape, info);
    const std::uint32_t span = level_span_tiles(shape, info);
    std::uint64_t used = 0;
    for (std::uint32_t first = 0; first + span <= tiles; ++first) {
        const std::uint64_t at = mask << first;
        if ((used & at) != 0) continue;
        used |= at;
        places.push_back(first);
    }
    return places;
}

PackedLevelPool::Shape& PackedLevelPool::shape_entry(LevelShape shape) {
    auto [entry, made] = shapes_.try_emplace(shape);
    if (made) entry->second.first_tiles = places_of(shape);
    return entry->second;
}

LevelPlace PackedLevelPool::describe(LevelShape shape, const Shape& entry,
                                     const Place& place) const {
    const TileFormatInfo info = tile_format_info(shape.format);
    const std::uint32_t first = entry.first_tiles[place.index];
    return {place.host, first, std::uint64_t(first) * info.tile_bytes(),
            std::uint64_t(level_span_tiles(shape, info)) * info.tile_bytes()};
}

std::optional<LevelPlace> PackedLevelPool::take(PageIndex level, LevelShape shape,
                                                FrameId completed) {
    Shape& entry = shape_entry(shape);
    auto ripe = std::find_if(entry.free.begin(), entry.free.end(),
                             [&](const Place& place) { return place.free_after <= completed; });
    if (ripe == entry.free.end()) return std::nullopt;
    const Place place = *ripe;
    entry.free.erase(ripe);
    levels_[level] = Level{shape, place, 0, false};
    return describe(shape, entry, place);
}

std::optional<PageIndex> PackedLevelPool::evict(LevelShape shape, FrameId completed) {
    Shape& entry = shape_entry(shape);
    if (entry.lru.empty() || entry.lru.begin()->first > completed) return std::nullopt;
    const PageIndex victim = entry.lru.begin()->second;
    entry.lru.erase(entry.lru.begin());
    auto found = levels_.find(victim);
    Place place = found->second.place;
    place.free_after = unreported;
    entry.free.push_back(place);
    levels_.erase(found);
    --resident_;
    return victim;
}

void PackedLevelPool::evictions_reported(FrameId current) {
    for (auto& [shape, entry] : shapes_) {
        for (Place& place : entry.free) {
            if (place.free_after == unreported) place.free_after = current;
        }
    }
}

std::size_t PackedLevelPool::add_host(LevelShape shape) {
    Shape& entry = shape_entry(shape);
    const std::size_t host = hosts_.size();
    hosts_.push_back(shape);
    ++entry.hosts;
    for (std::uint32_t i = 0; i < entry.first_tiles.size(); ++i) {
        entry.free.push_back({host, i, 0});
    }
    return host;
}

void PackedLevelPool::filled(PageIndex level, FrameId frame) {
    auto found = levels_.find(level);
    if (found == levels_.end() || found->second.resident) return;
    Level& entry = found->second;
    entry.resident = true;
    entry.last_used = std::max(entry.last_used, frame);
    shapes_.at(entry.shape).lru.emplace(entry.last_used, level);
    ++resident_;
}

void PackedLevelPool::touch(PageIndex level, FrameId frame) {
    auto found = levels_.find(level);
    if (found == levels_.end()) return;
    Level& entry = found->second;
    if (frame <= entry.last_used) return;
    if (entry.resident) {
        auto& lru = shapes_.at(entry.shape).lru;
        lru.erase({entry.last_used, level});
        lru.emplace(frame, level);
    }
    entry.last_used = frame;
}

void PackedLevelPool::release(PageIndex level) {
    auto found = levels_.find(level);
    if (found == levels_.end() || found->second.resident) return;
    Shape& shape = shapes_.at(found->second.shape);
    Place place = found->second.place;
    place.free_after = 0;
    shape.free.push_back(place);
    levels_.erase(found);
}

std::optional<LevelPlace> PackedLevelPool::place_of(PageIndex level) const {
    auto found = levels_.find(level);
    if (found == levels_.end()) return std::nullopt;
    return describe(found->second.shape, shapes_.at(found->second.shape), found->second.place);
}

}  // namespace vtpage::vt
