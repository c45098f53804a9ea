// RequestLatencyTracker: the first request of a page starts its wait, the frame that first
// samples it ends it (exact in frames), dropped pages give no sample, the bound refuses new
// pages, and the feedback thread and the render thread may use it at once.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "vtpage/base/error.hpp"
#include "vtpage/streaming/feedback/request_latency_tracker.hpp"

namespace vtpage::vt {
namespace {

using Pages = std::vector<PageIndex>;

TEST(RequestLatencyTrackerTest, TheFirstRequestStartsTheWait) {
    RequestLatencyTracker latency;
    EXPECT_EQ(latency.note_requested(10, Pages{1, 2}), 2u);
    EXPECT_EQ(latency.note_requested(14, Pages{1, 2, 3}), 1u) << "1 and 2 keep frame 10";
    latency.note_visible(17, Pages{1, 3});
    const RequestLatencyStatistics statistics = latency.statistics();
    EXPECT_EQ(statistics.samples, 2u);
    EXPECT_EQ(statistics.frames_max, 7u) << "page 1: 17 - 10, not 17 - 14";
    EXPECT_EQ(statistics.frames_p50, 3u) << "page 3: 17 - 14";
    EXPECT_EQ(statistics.tracked, 1u) << "page 2 still waits";
    EXPECT_GE(statistics.ms_max, statistics.ms_p50);
    EXPECT_GE(statistics.ms_p50, 0.0);
}

TEST(RequestLatencyTrackerTest, FramesAreExactNearestRankPercentiles) {
    RequestLatencyTracker latency;
    // 200 pages: latency i frames for page i (0..199), each requested at frame 1000.
    Pages pages;
    for (PageIndex page = 0; page < 200; ++page) pages.push_back(page);
    latency.note_requested(1000, pages);
    for (PageIndex page = 0; page < 200; ++page) latency.note_visible(1000 + page, Pages{page});
    const RequestLatencyStatistics statistics = latency.statistics();
    EXPECT_EQ(statistics.samples, 200u);
    EXPECT_EQ(statistics.frames_p50, 99u) << "the 100th smallest";
    EXPECT_EQ(statistics.frames_p99, 197u) << "the 198th smallest";
    EXPECT_EQ(statistics.frames_max, 199u);
    EXPECT_EQ(statistics.tracked, 0u);
    // Seen again without a new request: no second sample.
    latency.note_visible(5000, pages);
    EXPECT_EQ(latency.statistics().samples, 200u);
}

TEST(RequestLatencyTrackerTest, AVisibleFrameBeforeTheRequestCountsAsZero) {
    RequestLatencyTracker latency;
    latency.note_requested(20, Pages{4});
    latency.note_visible(18, Pages{4});
    EXPECT_EQ(latency.statistics().samples, 1u);
    EXPECT_EQ(latency.statistics().frames_max, 0u);
}

TEST(RequestLatencyTrackerTest, DroppedPagesGiveNoSampleAndAreCounted) {
    RequestLatencyTracker latency;
    latency.note_requested(1, Pages{1, 2, 3});
    latency.note_dropped(Pages{2, 3, 99});  // 99 was never tracked: not counted
    latency.note_visible(50, Pages{1, 2, 3});
    RequestLatencyStatistics statistics = latency.statistics();
    EXPECT_EQ(statistics.dropped, 2u);
    EXPECT_EQ(statistics.samples, 1u);
    EXPECT_EQ(statistics.frames_max, 49u);
    // Asked again after the drop: a new wait from the new request.
    latency.note_requested(60, Pages{2});
    latency.note_visible(62, Pages{2});
    statistics = latency.statistics();
    EXPECT_EQ(statistics.samples, 2u);
    EXPECT_EQ(statistics.frames_p50, 2u);
}

TEST(RequestLatencyTrackerTest, TheBoundRefusesNewPagesAndKeepsTheWaitingOnes) {
    RequestLatencyTracker latency({.max_tracked_pages = 3});
    EXPECT_EQ(latency.note_requested(1, Pages{1, 2, 3, 4, 5}), 3u);
    RequestLatencyStatistics statistics = latency.statistics();
    EXPECT_EQ(statistics.tracked, 3u);
    EXPECT_EQ(statistics.refused, 2u);
    latency.note_visible(9, Pages{1, 2, 3, 4, 5});
    statistics = latency.statistics();
    EXPECT_EQ(statistics.samples, 3u) << "4 and 5 were never tracked";
    EXPECT_EQ(statistics.frames_max, 8u) << "the oldest were kept";
    EXPECT_EQ(latency.note_requested(10, Pages{4, 5}), 2u) << "room again";
    EXPECT_THROW(RequestLatencyTracker({.max_tracked_pages = 0}), Error);
}

TEST(RequestLatencyTrackerTest, ResetClearsTheFiguresAndKeepsTheWaitingPages) {
    RequestLatencyTracker latency({.max_tracked_pages = 2});
    latency.note_requested(1, Pages{1, 2, 3});
    latency.note_visible(5, Pages{1});
    latency.note_dropped(Pages{2});
    latency.note_requested(6, Pages{7});
    latency.reset();
    RequestLatencyStatistics statistics = latency.statistics();
    EXPECT_EQ(statistics.samples, 0u);
    EXPECT_EQ(statistics.frames_max, 0u);
    EXPECT_EQ(statistics.ms_max, 0.0);
    EXPECT_EQ(statistics.dropped, 0u);
    EXPECT_EQ(statistics.refused, 0u);
    EXPECT_EQ(statistics.tracked, 1u);
    latency.note_visible(10, Pages{7});
    EXPECT_EQ(latency.statistics().frames_max, 4u) << "page 7's request of frame 6 was kept";
}

// The feedback thread requests while the render thread publishes: every page is seen once,
// and its latency is what the publishing thread chose.
TEST(RequestLatencyTrackerTest, TwoThreadsRequestAndPublishAtOnce) {
    RequestLatencyTracker latency;
    constexpr PageIndex pages = 5000;
    std::thread requester([&] {
        for (PageIndex page = 0; page < pages; ++page) latency.note_requested(page, Pages{page});
    });
    std::thread publisher([&] {
        PageIndex next = 0;
        while (next < pages) {
            // A page is visible 3 frames after its request; retried until it was requested.
            const std::size_t before = latency.statistics().samples;
            latency.note_visible(next + 3, Pages{next});
            if (latency.statistics().samples > before) ++next;
        }
    });
    requester.join();
    publisher.join();
    const RequestLatencyStatistics statistics = latency.statistics();
    EXPECT_EQ(statistics.samples, pages);
    EXPECT_EQ(statistics.frames_p50, 3u);
    EXPECT_EQ(statistics.frames_max, 3u);
    EXPECT_EQ(statistics.tracked, 0u);
    EXPECT_EQ(statistics.dropped, 0u);
}

}  // namespace
}  // namespace vtpage::vt
