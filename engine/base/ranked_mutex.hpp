// A mutex with a rank in the library's one lock order (docs/streaming.md, "Locks"): a thread
// takes mutexes in increasing rank only, so no two threads can wait for each other. With the
// CMake option VTPAGE_LOCK_RANK_CHECKS (on in CI's sanitizer builds) every blocking acquisition
// checks the ranks the thread holds, and one taken out of order stops the process naming both
// mutexes: a bug in the library, reported as ThreadSanitizer reports a race. Without the option
// a RankedMutex is a std::mutex and a name.
//
// Wait on it with std::condition_variable_any (it meets BasicLockable, not std::mutex).
#pragma once

#include <mutex>

#include "base/test_points.hpp"

namespace vtpage::detail {

// Lower ranks are taken first. Mutexes of one rank are never held together.
enum class LockRank : int {
    streamer_level_placement = 10,  // serializes placing packed levels
    streamer_api = 20,              // add_texture's fills, the tail hosts
    streamer_event_queue = 40,      // events kept for poll_events
    streamer_state = 50,            // pending, in flight, ready, statistics
    streamer_level_pool = 55,       // the packed levels' pool and hosts
    streamer_stored_pages = 58,     // the stored-page route: its loader and the items it holds
    page_table_budget = 60,         // orders set_budget calls
    page_table_state = 70,          // the table's entries, queue and counts
    delivery_turn = 80,             // whose turn it is to report (OrderedDelivery)
    streamer_landings = 85,         // the stored-page route's queue for its lander (held alone)
    streamer_errors = 90,           // the streamer's kept errors (held alone, briefly)
};

#if defined(VTPAGE_LOCK_RANK_CHECKS) && VTPAGE_LOCK_RANK_CHECKS
inline constexpr bool lock_rank_checks = true;
#else
inline constexpr bool lock_rank_checks = false;
#endif

class RankedMutex {
public:
    constexpr RankedMutex(LockRank rank, const char* name) noexcept : rank_(rank), name_(name) {}
    RankedMutex(const RankedMutex&) = delete;
    RankedMutex& operator=(const RankedMutex&) = delete;

    void lock() {
        VTPAGE_TEST_POINT(name_);  // a schedule explorer may yield or sleep here
        if constexpr (lock_rank_checks) check_order();
        mutex_.lock();
        if constexpr (lock_rank_checks) note_held();
    }
    bool try_lock() {
        if (!mutex_.try_lock()) return false;
        if constexpr (lock_rank_checks) note_held();  // a try never waits: any order is safe
        return true;
    }
    void unlock() {
        if constexpr (lock_rank_checks) note_released();
        mutex_.unlock();
    }

    LockRank rank() const noexcept { return rank_; }
    const char* name() const noexcept { return name_; }

private:
    void check_order() const;
    void note_held() const;
    void note_released() const;

    std::mutex mutex_;
    LockRank rank_;
    const char* name_;
};

}  // namespace vtpage::detail
