#include <gtest/gtest.h>

#include "vtpage/core/latency_histogram.hpp"

namespace vtpage {
namespace {

TEST(LatencyHistogram, PercentilesAreWithinABucketOfTheTruth) {
    LatencyHistogram histogram;
    for (int i = 1; i <= 1000; ++i) histogram.record(std::chrono::microseconds(i));
    auto summary = histogram.summary();
    EXPECT_EQ(summary.count, 1000u);
    EXPECT_NEAR(summary.p50_us, 500.0, 500.0 * 0.04);
    EXPECT_NEAR(summary.p99_us, 990.0, 990.0 * 0.04);
    EXPECT_DOUBLE_EQ(summary.max_us, 1000.0);
    EXPECT_NEAR(summary.mean_us, 500.5, 0.01);
}

TEST(LatencyHistogram, EmptyAndResetAreZero) {
    LatencyHistogram histogram;
    EXPECT_EQ(histogram.summary().count, 0u);
    histogram.record(std::chrono::milliseconds(3));
    histogram.reset();
    EXPECT_EQ(histogram.summary().count, 0u);
    EXPECT_EQ(histogram.summary().p99_us, 0.0);
}

}  // namespace
}  // namespace vtpage
