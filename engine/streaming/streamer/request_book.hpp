// The streamer's book of requests: what waits (pending), what a worker holds (in flight), what
// is ready, and the statistics that count them; the workers wait on it for work and wait_idle
// for it to empty. A request is checked against all of these in one critical section, so they
// share one lock.
//
// Lock: mutex_ (rank streamer_state). Functions that need it take its guard (`const Lock&`);
// the others take it themselves. Held while calling the level pool (touch, filled, release)
// and the stored-page route's room, which come after it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/ranked_mutex.hpp"
#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/pending_queue.hpp"
#include "streaming/streamer/recent_demand.hpp"

namespace vtpage::vt::streamer_detail {

// Whether a worker's last batch found no room, and when: it waits for a wake or a short while.
struct WorkerStall {
    using Clock = std::chrono::steady_clock;
    bool stalled = false;
    std::uint64_t epoch = 0;
    Clock::time_point time{};
};

class RequestBook {
public:
    using Lock = std::unique_lock<detail::RankedMutex>;
    RequestBook(std::size_t max_pending, FrameId recent_frames)
        : pending_(max_pending), demand_(recent_frames) {}

    Lock lock() const { return Lock(mutex_); }

    // ---- requests (guard held) ----
    // Queues `key` (its page neither ready nor in flight); counts what was queued or dropped.
    void queue(const Lock&, const PendingKey& key, StreamRequestResult& result, bool& queued);
    // Back to pending after a batch could not take them (their priority kept, asked_in moved to
    // a frame that asked again while they were in flight).
    void requeue(const Lock&, std::span<const PendingKey> keys);
    // Packed levels that found every place held by levels wanted since they were asked: dropped
    // and counted, unless asked again in a later frame while in flight (then pending again).
    void supersede(const Lock&, std::span<const PendingKey> keys);
    // A page taken again after the table evicted it under a request (a new sequence).
    void requeue_taken(const Lock&, const PendingKey& key) { pending_.requeue(key); }
    bool is_pending(const Lock&, PageIndex page) const { return pending_.contains(page); }
    bool in_flight(const Lock&, PageIndex page) const { return in_flight_.count(page) != 0; }
    // A page asked for again while in flight, in `frame`: its batch keeps it for that frame.
    void ask_again(const Lock&, PageIndex page, FrameId frame);
    // Takes the page out of flight; whether it was asked for again meanwhile (then `asked_in`
    // moves to the newest frame that asked).
    bool leave_flight(const Lock&, PageIndex page, FrameId& asked_in);
    std::size_t cancel(const Lock&, std::span<const PageIndex> pages);
    std::size_t clear_pending(const Lock&);
    std::size_t pending_count(const Lock&) const { return pending_.size(); }

    // ---- ready pages (guard held) ----
    const StreamedPage* find_ready(const Lock&, PageIndex page) const;
    std::vector<StreamedPage> all_ready(const Lock&) const;
    void set_ready(const Lock&, PageIndex page, const StreamedPage& ready) { ready_[page] = ready; }
    // Takes the page out of ready if its entry is of `generation` (a later one stays).
    void unready(const Lock&, PageIndex page, std::uint64_t generation);
    std::optional<StreamedPage> take_ready(const Lock&, PageIndex page);
    void add_tail(const Lock&, PageIndex page, bool packed);
    const std::vector<PageIndex>& tails(const Lock&) const { return tails_; }

    // ---- reports and statistics (guard held) ----
    StreamerStatistics& stats(const Lock&) { return stats_; }
    // Const too: reading it forgets frames that left the window.
    RecentDemand& demand(const Lock&) const { return demand_; }
    // StreamerSettings::recent_frames (fixed: no guard).
    FrameId recent_frames() const noexcept { return demand_.window(); }
    // A batch between leaving flight and its ready event: the book is not idle meanwhile.
    void begin_report(const Lock&) { ++reporting_; }
    void end_report(const Lock&);
    void notify_if_idle(const Lock&);
    // The counts of pending, in flight, ready and tails, with the statistics.
    StreamerStatistics snapshot(const Lock&) const;

    // ---- workers ----
    // Waits for up to `batch_pages` keys (fewer with less `room`), taken into flight; empty when
    // the worker should look at its async batches first; nullopt once stopping.
    std::optional<std::vector<PendingKey>> take_batch(const WorkerStall& stall, bool holding_async,
                                                      const std::function<std::size_t()>& room,
                                                      std::size_t batch_pages);
    void note_stall(WorkerStall& stall);
    // Frames completed, pins released or the budget changed: stalled workers look again.
    void wake();
    void notify_workers() { work_cv_.notify_all(); }
    void stop();
    bool wait_idle(std::chrono::milliseconds timeout);
    std::uint64_t finished_pages();  // filled or failed

private:
    bool idle_nolock() const { return pending_.empty() && in_flight_.empty() && reporting_ == 0; }
    bool may_retry_nolock(const WorkerStall& stall) const;
    // Whether a worker waiting with `lock` should stop waiting (`look_again`: without keys).
    bool wait_for_work_nolock(Lock& lock, const WorkerStall& stall, bool holding_async,
                              const std::function<std::size_t()>& room);

    mutable detail::RankedMutex mutex_{detail::LockRank::streamer_state, "streamer state"};
    std::condition_variable_any work_cv_;
    std::condition_variable_any idle_cv_;
    PendingQueue pending_;                     // guarded by mutex_
    std::unordered_set<PageIndex> in_flight_;  // guarded by mutex_
    // Pages requested again while in flight: their batch marks them used by the frame current
    // when it finishes, or a frame that asked for a page committed frames earlier could see it
    // evicted as soon as it is ready, its request lost. Guarded by mutex_.
    std::unordered_map<PageIndex, FrameId> asked_in_flight_;  // page -> newest frame asking
    std::size_t reporting_ = 0;  // batches between leaving flight and their ready events
    std::unordered_map<PageIndex, StreamedPage> ready_;  // guarded by mutex_
    std::vector<PageIndex> tails_;                       // pinned tail pages; guarded by mutex_
    std::size_t packed_tails_ = 0;  // ready tails in another's page; guarded by mutex_
    std::uint64_t wake_epoch_ = 0;  // guarded by mutex_
    bool stopping_ = false;         // guarded by mutex_
    StreamerStatistics stats_;      // guarded by mutex_
    mutable RecentDemand demand_;   // guarded by mutex_
};

}  // namespace vtpage::vt::streamer_detail
