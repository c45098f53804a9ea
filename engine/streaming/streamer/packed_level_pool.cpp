#include "streaming/streamer/packed_level_pool.hpp"

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
    // A page of a tile level is one tile: placed as a level of one tile.
    if (layout.tile_level(mip)) return LevelShape{layout.format, 1, 1, layout.stack.packed};
    const MipLevel& level = layout.mips[mip];
    if (level.pages_x != 1 || level.pages_y != 1) return std::nullopt;
    const LevelShape shape{layout.format, level.tiles_x, level.tiles_y, layout.stack.packed};
    if (places_of(shape).size() < 2) return std::nullopt;
    return shape;
}

std::vector<std::uint32_t> PackedLevelPool::places_of(LevelShape shape) {
    const TileFormatInfo info = shape.tile_format();
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
    const TileFormatInfo info = shape.tile_format();
    const std::uint32_t first = entry.first_tiles[place.index];
    const PageRows rows{std::uint64_t(shape.tiles_x) * info.tile_bytes(), shape.tiles_y,
                        std::uint64_t(info.page_tiles_x) * info.tile_bytes()};
    return {place.host, first, std::uint64_t(first) * info.tile_bytes(),
            std::uint64_t(level_span_tiles(shape, info)) * info.tile_bytes(), rows};
}

std::optional<LevelPlace> PackedLevelPool::take(PageIndex level, LevelShape shape,
                                                FrameId completed) {
    Shape& entry = shape_entry(shape);
    const std::optional<Place> ripe = entry.free.take_first_ripe(
        completed, [&](const Place& place) { return !hosts_[place.host].retired; });
    if (!ripe) return std::nullopt;
    const Place place = *ripe;
    ++hosts_[place.host].levels;
    levels_[level] = Level{shape, place, 0, 0, false};
    evicted_for_.erase(level);
    return describe(shape, entry, place);
}

PackedLevelPool::Eviction PackedLevelPool::evict(LevelShape shape, FrameId completed,
                                                 PageIndex level, FrameId asked_in) {
    // Levels asked for and then abandoned leave their marks behind: drop the ripe ones.
    std::erase_if(evicted_for_, [&](const auto& mark) { return mark.second <= completed; });
    if (evicted_for_.count(level)) return {};
    Shape& entry = shape_entry(shape);
    if (entry.lru.empty()) return {};  // every place is being filled: wait for them
    auto candidate = entry.lru.begin();
    const auto older = [&](FrameId wanted) { return asked_in == 0 || wanted < asked_in; };
    while (candidate != entry.lru.end() && older(candidate->first) &&
           levels_.at(candidate->second).fence > completed) {
        ++candidate;
    }
    if (candidate == entry.lru.end() || !older(candidate->first)) {
        // Nothing older is left, or what is older waits for its frames.
        return {.victim = std::nullopt, .superseded = !older(entry.lru.begin()->first)};
    }
    const PageIndex victim = candidate->second;
    entry.lru.erase(candidate);
    auto found = levels_.find(victim);
    Place place = found->second.place;
    entry.free.hold_unreported(place);
    levels_.erase(found);
    --resident_;
    --hosts_[place.host].levels;
    evicted_for_[level] = FrameFencedReuse<Place>::unreported;
    return {.victim = victim, .superseded = false};
}

void PackedLevelPool::evictions_reported(FrameId current) {
    for (auto& [shape, entry] : shapes_) {
        entry.free.fence_unreported(current);
    }
    for (auto& [level, ripe_after] : evicted_for_) {
        if (ripe_after == FrameFencedReuse<Place>::unreported) ripe_after = current;
    }
}

std::size_t PackedLevelPool::add_host(LevelShape shape) {
    Shape& entry = shape_entry(shape);
    std::size_t host = hosts_.size();
    if (!released_.empty()) {
        host = released_.back();
        released_.pop_back();
        hosts_[host] = Host{shape};
    } else {
        hosts_.push_back(Host{shape});
    }
    ++entry.hosts;
    ++active_;
    for (std::uint32_t i = 0; i < entry.first_tiles.size(); ++i) {
        entry.free.hold({host, i}, 0);
    }
    return host;
}

void PackedLevelPool::filled(PageIndex level, FrameId frame, FrameId asked_in) {
    auto found = levels_.find(level);
    if (found == levels_.end() || found->second.resident) return;
    Level& entry = found->second;
    entry.resident = true;
    entry.fence = std::max(entry.fence, frame);
    entry.wanted_in = std::max(entry.wanted_in, asked_in);
    shapes_.at(entry.shape).lru.emplace(entry.wanted_in, level);
    ++resident_;
}

void PackedLevelPool::touch(PageIndex level, FrameId frame) {
    auto found = levels_.find(level);
    if (found == levels_.end()) return;
    Level& entry = found->second;
    entry.fence = std::max(entry.fence, frame);
    if (frame <= entry.wanted_in) return;
    if (entry.resident) {
        auto& lru = shapes_.at(entry.shape).lru;
        lru.erase({entry.wanted_in, level});
        lru.emplace(frame, level);
    }
    entry.wanted_in = frame;
}

void PackedLevelPool::release(PageIndex level) {
    auto found = levels_.find(level);
    if (found == levels_.end() || found->second.resident) return;
    Shape& shape = shapes_.at(found->second.shape);
    Place place = found->second.place;
    shape.free.hold(place, 0);
    --hosts_[place.host].levels;
    levels_.erase(found);
}

bool PackedLevelPool::retire_host() {
    std::optional<std::size_t> fewest;
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
        if (hosts_[h].retired || hosts_[h].released) continue;
        if (!fewest || hosts_[h].levels < hosts_[*fewest].levels) fewest = h;
    }
    if (!fewest) return false;
    hosts_[*fewest].retired = true;
    --shapes_.at(hosts_[*fewest].shape).hosts;
    --active_;
    return true;
}

std::vector<PageIndex> PackedLevelPool::evict_retired(FrameId completed) {
    std::vector<PageIndex> victims;
    for (const auto& [page, level] : levels_) {
        if (level.resident && level.fence <= completed && hosts_[level.place.host].retired) {
            victims.push_back(page);
        }
    }
    for (PageIndex page : victims) {
        auto found = levels_.find(page);
        Shape& shape = shapes_.at(found->second.shape);
        shape.lru.erase({found->second.wanted_in, page});
        Place place = found->second.place;
        shape.free.hold_unreported(place);
        --hosts_[place.host].levels;
        --resident_;
        levels_.erase(found);
    }
    return victims;
}

std::vector<std::size_t> PackedLevelPool::hosts_held() const {
    std::vector<std::size_t> held;
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
        if (!hosts_[h].released) held.push_back(h);
    }
    return held;
}

std::optional<std::size_t> PackedLevelPool::release_retired(FrameId completed) {
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
        Host& host = hosts_[h];
        if (!host.retired || host.released || host.levels > 0) continue;
        Shape& shape = shapes_.at(host.shape);
        const bool ripe =
            shape.free.all_ripe(completed, [&](const Place& p) { return p.host == h; });
        if (!ripe) continue;
        shape.free.drop_if([&](const Place& p) { return p.host == h; });
        host.released = true;
        released_.push_back(h);
        return h;
    }
    return std::nullopt;
}

std::optional<LevelPlace> PackedLevelPool::place_of(PageIndex level) const {
    auto found = levels_.find(level);
    if (found == levels_.end()) return std::nullopt;
    return describe(found->second.shape, shapes_.at(found->second.shape), found->second.place);
}

}  // namespace vtpage::vt
