// The reuse rule's one mechanism: what is let go is handed back only once the frame it waits for
// is complete; an item whose eviction is not reported yet waits for the frame named later.
#include <gtest/gtest.h>

#include <string>

#include "vtpage/core/frame_fenced_reuse.hpp"

namespace vtpage {
namespace {

TEST(FrameFencedReuseTest, AnItemIsHandedBackOnceItsFrameIsComplete) {
    FrameFencedReuse<int> held;
    held.hold(1, 3);
    held.hold(2, 5);
    held.hold(3, 0);  // no frame could reach it: ripe at once
    EXPECT_EQ(held.size(), 3u);
    EXPECT_EQ(held.ripe_count(2), 1u);
    EXPECT_EQ(held.take_ripe(2, 10), std::vector<int>{3});
    EXPECT_TRUE(held.take_ripe(2, 10).empty()) << "frame 3 is not complete";
    EXPECT_EQ(held.take_ripe(5, 1), std::vector<int>{1}) << "at most one, the first held";
    EXPECT_EQ(held.take_ripe(5, 1), std::vector<int>{2});
    EXPECT_TRUE(held.empty());
}

TEST(FrameFencedReuseTest, AnUnreportedItemWaitsForTheFrameCurrentWhenItWasReported) {
    FrameFencedReuse<std::string> held;
    held.hold_unreported("place");
    EXPECT_EQ(held.ripe_count(1000), 0u) << "its eviction is not reported: no frame is enough";
    EXPECT_FALSE(held.take_first_ripe(1000, [](const std::string&) { return true; }));
    held.fence_unreported(7);
    held.hold_unreported("later");
    EXPECT_EQ(held.ripe_count(6), 0u);
    const auto waiting = held.waiting(6);
    EXPECT_EQ(waiting.count, 2u);
    EXPECT_EQ(waiting.first, 7u);
    EXPECT_EQ(waiting.last, FrameFencedReuse<std::string>::unreported);
    EXPECT_EQ(held.take_first_ripe(7, [](const std::string&) { return true; }), "place");
    held.fence_unreported(9);
    EXPECT_FALSE(held.all_ripe(8, [](const std::string&) { return true; }));
    EXPECT_TRUE(held.all_ripe(9, [](const std::string&) { return true; }));
}

TEST(FrameFencedReuseTest, SelectsDropsAndTakesEverything) {
    FrameFencedReuse<int> held;
    for (int i = 0; i < 6; ++i) held.hold(i, FrameId(i));
    EXPECT_EQ(held.take_first_ripe(5, [](int i) { return i % 2 == 1; }), 1);
    EXPECT_TRUE(held.all_ripe(2, [](int i) { return i < 3; }));
    EXPECT_FALSE(held.all_ripe(2, [](int i) { return i == 4; }));
    EXPECT_EQ(held.drop_if([](int i) { return i >= 4; }), 2u);
    int visited = 0;
    held.for_each([&](int, FrameId) { ++visited; });
    EXPECT_EQ(visited, 3);
    EXPECT_EQ(held.take_all(), (std::vector<int>{0, 2, 3}));
    EXPECT_TRUE(held.empty());
}

}  // namespace
}  // namespace vtpage
