// The lock order's checker: ranks taken in order pass, out of order the process stops naming both
// mutexes (in builds with VTPAGE_LOCK_RANK_CHECKS; elsewhere the test says it was skipped).
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/ranked_mutex.hpp"

namespace vtpage::detail {
namespace {

TEST(RankedMutexTest, RanksTakenInOrderAndWaitsOnThemPass) {
    RankedMutex outer(LockRank::streamer_api, "outer");
    RankedMutex inner(LockRank::streamer_state, "inner");
    std::condition_variable_any ready;
    bool flag = false;
    std::thread other([&] {
        std::lock_guard lock(inner);
        flag = true;
        ready.notify_all();
    });
    {
        std::lock_guard first(outer);
        std::unique_lock second(inner);
        ready.wait(second, [&] { return flag; });  // releases and takes `inner` again
    }
    other.join();
    // Released out of the order they were taken in: still fine.
    outer.lock();
    inner.lock();
    outer.unlock();
    inner.unlock();
    std::lock_guard again(outer);
    EXPECT_TRUE(inner.try_lock());
    inner.unlock();
}

TEST(RankedMutexDeathTest, RanksTakenOutOfOrderStopTheProcessNamingBoth) {
    if (!lock_rank_checks) GTEST_SKIP() << "needs -DVTPAGE_LOCK_RANK_CHECKS=ON";
    RankedMutex low(LockRank::streamer_level_placement, "level placement");
    RankedMutex high(LockRank::page_table_state, "page table");
    EXPECT_DEATH(
        {
            std::lock_guard first(high);
            std::lock_guard second(low);
        },
        "lock order violated: taking level placement \\(rank 10\\) while holding page table "
        "\\(rank 70\\)");
    EXPECT_DEATH(
        {
            std::lock_guard first(low);
            RankedMutex same(LockRank::streamer_level_placement, "another placement");
            std::lock_guard second(same);
        },
        "taking another placement \\(rank 10\\) while holding level placement");
}

}  // namespace
}  // namespace vtpage::detail
