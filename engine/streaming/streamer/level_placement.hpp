// Packed coarse levels in the streamer: where each goes (PackedLevelPool's bookkeeping), the
// host pages that hold them (pages of the streamer's own, named past the texture set's region),
// their evictions, and giving hosts back under a lowered budget.
//
// Locks, in the lock order (engine/base/ranked_mutex.hpp):
// - the placement lock (PlacementLock, taken first) serializes placing and shrinking, so that an
//   eviction is reported before its place, or the evicted level itself, is placed again. The
//   functions that need it take the guard as their first parameter;
// - pool_mutex_ guards the pool, the hosts and the counts. The streamer's parts call touch, filled
//   and release with the request book's lock held, which comes before this one.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "base/ranked_mutex.hpp"
#include "streaming/streamer/packed_level_pool.hpp"
#include "streaming/streamer/streamer_events.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::vt::streamer_detail {

// A level's place and the host page it is in.
struct PlacedLevel {
    LevelPlace place;
    StreamedPage host;
};

class LevelPlacement {
public:
    using PlacementLock = std::unique_lock<detail::RankedMutex>;
    struct Hooks {
        // Under the request book's lock, runs `evict` (which evicts levels from the pool),
        // takes those levels out of the ready pages and takes the ticket of their evicted event;
        // returns the events of those that were ready. One critical section, so that a request
        // sees a level either placed and ready or evicted and not ready.
        std::function<std::vector<StreamedPage>(
            const std::function<std::vector<PageIndex>()>& evict, StreamerEvents::Ticket&)>
            evict_and_unready;
        // The host page a commit made (its address: window or region).
        std::function<StreamedPage(const PageMapping&)> describe;
        std::function<void(std::exception_ptr)> record_error;
    };

    // `host_names` pages from `host_base` on may hold levels (0: packing is off);
    // `packed_level_pages` caps them (0: a quarter of the budget).
    LevelPlacement(PageTable& table, StreamerEvents& events, Hooks hooks, PageIndex host_base,
                   std::size_t host_names, std::size_t packed_level_pages);

    bool enabled() const noexcept { return host_names_ > 0; }
    // A texture streams tiles (tile levels): hosts may take three quarters of the budget when
    // their cap is automatic, not a quarter.
    void streams_tiles() noexcept { streams_tiles_ = true; }
    bool is_host(PageIndex page) const noexcept { return enabled() && page >= host_base_; }
    // Hosts beyond the budget's share wait to be given back (shrink() again).
    bool retiring() const noexcept { return retiring_; }

    PlacementLock lock_placement();
    PlacementLock try_lock_placement();
    struct Placing {
        std::optional<PlacedLevel> placed;
        // Every level of the shape was wanted since `level` was asked for (PackedLevelPool).
        bool superseded = false;
    };
    // A place for `level` of `shape`: a free one, else in a new host page (within the cap), else
    // the place of the least recently wanted level of its shape wanted before `asked_in` (the
    // first frame the request keeps: first_kept_frame), evicted and reported here. No place when
    // nothing is free yet (frames in flight), when the level is superseded, or when the shape has
    // no host and no room for one (has_host tells the last apart).
    Placing place(const PlacementLock&, PageIndex level, LevelShape shape, FrameId asked_in);
    bool has_host(LevelShape shape) const;
    // Gives back hosts beyond the cap (a lowered budget): they take no new level, their levels
    // are evicted as their frames complete, and each is unpinned and evicted once its places
    // are ripe. Call again until retiring() is false.
    void shrink(const PlacementLock&);

    // With the request book's lock held (see above).
    void touch(PageIndex level, FrameId frame);
    void filled(PageIndex level, FrameId frame, FrameId asked_in);
    void release(PageIndex level);

    // The host pages not given back (to unpin at destruction).
    std::vector<PageIndex> held_hosts() const;
    std::size_t host_count() const;
    std::size_t resident_levels() const;
    std::uint64_t evicted_levels() const;

private:
    std::size_t host_cap() const;
    bool add_host(LevelShape shape);
    // Evicts what `evict` picks (under the pool lock, inside the request book's lock), reports it,
    // then frees the places for the frames begun until now. Returns how many levels left.
    std::size_t evict_and_report(const std::function<std::vector<PageIndex>()>& evict);

    PageTable& table_;
    StreamerEvents& events_;
    Hooks hooks_;
    const PageIndex host_base_;
    const std::size_t host_names_;
    const std::size_t packed_level_pages_;
    std::atomic<bool> retiring_{false};
    std::atomic<bool> streams_tiles_{false};

    detail::RankedMutex placement_mutex_{detail::LockRank::streamer_level_placement,
                                         "streamer level placement"};
    mutable detail::RankedMutex pool_mutex_{detail::LockRank::streamer_level_pool,
                                            "streamer level pool"};
    PackedLevelPool pool_;              // guarded by pool_mutex_
    std::vector<StreamedPage> hosts_;   // by the pool's host index; guarded by pool_mutex_
    std::uint64_t evicted_levels_ = 0;  // guarded by pool_mutex_
};

}  // namespace vtpage::vt::streamer_detail
