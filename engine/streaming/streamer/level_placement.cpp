#include "streaming/streamer/level_placement.hpp"

#include <algorithm>

#include "base/test_points.hpp"

namespace vtpage::vt::streamer_detail {

LevelPlacement::LevelPlacement(PageTable& table, StreamerEvents& events, Hooks hooks,
                               PageIndex host_base, std::size_t host_names,
                               std::size_t packed_level_pages)
    : table_(table),
      events_(events),
      hooks_(std::move(hooks)),
      host_base_(host_base),
      host_names_(host_names),
      packed_level_pages_(packed_level_pages) {}

LevelPlacement::PlacementLock LevelPlacement::lock_placement() {
    return PlacementLock(placement_mutex_);
}

LevelPlacement::PlacementLock LevelPlacement::try_lock_placement() {
    return PlacementLock(placement_mutex_, std::try_to_lock);
}

std::size_t LevelPlacement::host_cap() const {
    // Tiles of tile levels are most of what is streamed where a texture has them.
    const std::size_t share =
        streams_tiles_ ? table_.budget_pages() * 3 / 4 : table_.budget_pages() / 4;
    const std::size_t wanted =
        packed_level_pages_ > 0 ? packed_level_pages_ : std::max<std::size_t>(1, share);
    return std::min(wanted, host_names_);
}

// Commits a new host page for levels of `shape`, pinned; false when the budget has no room for
// it (or the commit failed: the error is recorded).
bool LevelPlacement::add_host(LevelShape shape) {
    PageIndex name = 0;
    {
        std::lock_guard lock(pool_mutex_);
        name = host_base_ + pool_.next_host();
    }
    std::vector<PageMapping> mappings;
    try {
        mappings = table_.commit(std::span(&name, 1), true);
    } catch (const Error& error) {
        if (error.code() != Errc::budget_exhausted && error.code() != Errc::busy) {
            hooks_.record_error(std::current_exception());
        }
        return false;
    }
    const StreamedPage host = hooks_.describe(mappings.front());
    std::lock_guard lock(pool_mutex_);
    const std::size_t index = pool_.add_host(shape);
    if (index >= hosts_.size()) hosts_.resize(index + 1);
    hosts_[index] = host;
    return true;
}

std::size_t LevelPlacement::evict_and_report(const std::function<std::vector<PageIndex>()>& evict) {
    std::size_t evicted = 0;
    StreamerEvents::Ticket ticket;
    const std::vector<StreamedPage> victims = hooks_.evict_and_unready(
        [&] {
            std::lock_guard lock(pool_mutex_);
            std::vector<PageIndex> levels = evict();
            evicted = levels.size();
            evicted_levels_ += evicted;
            return levels;
        },
        ticket);
    // Reported (the place's old entry cleared) before the place is free for the frames to come.
    events_.emit(ticket, StreamerEventKind::evicted, victims);
    if (evicted > 0) {
        // The defect switch makes the places ripe at once, whatever frames may still read them.
        const FrameId current =
            VTPAGE_TEST_SWITCH("defect.level_place_ripe_at_once") ? 0 : table_.current_frame();
        std::lock_guard lock(pool_mutex_);
        pool_.evictions_reported(current);
    }
    return evicted;
}

LevelPlacement::Placing LevelPlacement::place(const PlacementLock&, PageIndex level,
                                              LevelShape shape, FrameId asked_in) {
    bool may_grow = true;
    bool evicted_one = false;
    while (true) {
        const FrameId completed = table_.completed_frame();
        {
            std::lock_guard lock(pool_mutex_);
            if (auto place = pool_.take(level, shape, completed)) {
                return {.placed = PlacedLevel{*place, hosts_.at(place->host)}};
            }
            may_grow =
                may_grow && pool_.active_hosts() < host_cap() && pool_.host_count() < host_names_;
            if (!may_grow && evicted_one) return {};
        }
        if (may_grow) {
            may_grow = add_host(shape);
            continue;
        }
        bool superseded = false;
        const std::size_t evicted = evict_and_report([&] {
            const PackedLevelPool::Eviction eviction =
                pool_.evict(shape, completed, level, asked_in);
            superseded = eviction.superseded;
            return eviction.victim ? std::vector<PageIndex>{*eviction.victim}
                                   : std::vector<PageIndex>{};
        });
        if (evicted == 0) return {.placed = std::nullopt, .superseded = superseded};
        evicted_one = true;
    }
}

bool LevelPlacement::has_host(LevelShape shape) const {
    std::lock_guard lock(pool_mutex_);
    return pool_.has_host(shape);
}

void LevelPlacement::shrink(const PlacementLock&) {
    const FrameId completed = table_.completed_frame();
    {
        std::lock_guard lock(pool_mutex_);
        while (pool_.active_hosts() > host_cap() && pool_.retire_host()) {}
        retiring_ = pool_.host_count() > pool_.active_hosts();
        if (!retiring_) return;
    }
    evict_and_report([&] { return pool_.evict_retired(completed); });
    while (true) {
        const FrameId now_completed = table_.completed_frame();
        std::optional<std::size_t> released;
        {
            std::lock_guard lock(pool_mutex_);
            released = pool_.release_retired(now_completed);
        }
        if (!released) break;
        const PageIndex name = host_base_ + *released;
        try {
            table_.unpin(std::span(&name, 1));
            table_.evict(std::span(&name, 1));
        } catch (const Error& error) {
            // Unpinned, it is the table's to evict when it needs room (busy, not_mapped).
            if (error.code() != Errc::busy && error.code() != Errc::not_mapped) {
                hooks_.record_error(std::current_exception());
            }
        }
    }
}

void LevelPlacement::touch(PageIndex level, FrameId frame) {
    std::lock_guard lock(pool_mutex_);
    pool_.touch(level, frame);
}

void LevelPlacement::filled(PageIndex level, FrameId frame, FrameId asked_in) {
    std::lock_guard lock(pool_mutex_);
    pool_.filled(level, frame, asked_in);
}

void LevelPlacement::release(PageIndex level) {
    std::lock_guard lock(pool_mutex_);
    pool_.release(level);
}

std::vector<PageIndex> LevelPlacement::held_hosts() const {
    std::lock_guard lock(pool_mutex_);
    std::vector<PageIndex> names;
    for (std::size_t host : pool_.hosts_held()) names.push_back(host_base_ + host);
    return names;
}

std::size_t LevelPlacement::host_count() const {
    std::lock_guard lock(pool_mutex_);
    return pool_.host_count();
}

std::size_t LevelPlacement::resident_levels() const {
    std::lock_guard lock(pool_mutex_);
    return pool_.resident_levels();
}

std::uint64_t LevelPlacement::evicted_levels() const {
    std::lock_guard lock(pool_mutex_);
    return evicted_levels_;
}

}  // namespace vtpage::vt::streamer_detail
