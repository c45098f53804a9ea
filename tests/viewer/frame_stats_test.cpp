// The viewer's measurements: percentiles, warm-up frames left out, rates over the last second,
// and the report's JSON and summary.
#include <gtest/gtest.h>

#include "frame_stats.hpp"
#include "run_report.hpp"

namespace vtpage::viewer {
namespace {

TEST(FrameStatsTest, PercentilesAreNearestRank) {
    std::vector<double> values;
    for (int i = 100; i >= 1; --i) values.push_back(i);
    const Percentiles p = percentiles(values);
    EXPECT_EQ(p.count, 100u);
    EXPECT_DOUBLE_EQ(p.p50, 50);
    EXPECT_DOUBLE_EQ(p.p90, 90);
    EXPECT_DOUBLE_EQ(p.p99, 99);
    EXPECT_DOUBLE_EQ(p.max, 100);
    EXPECT_DOUBLE_EQ(p.mean, 50.5);
    EXPECT_EQ(percentiles({}).count, 0u);
    EXPECT_DOUBLE_EQ(percentiles({7}).p99, 7);
}

TEST(FrameStatsTest, WarmupFramesStayOutOfThePercentilesButNotOutOfTheCount) {
    FrameStats stats(3);
    for (double ms : {500.0, 400.0, 300.0, 2.0, 4.0}) stats.record_frame(ms);
    EXPECT_EQ(stats.frames(), 5u);
    EXPECT_EQ(stats.frame_ms().count, 2u);
    EXPECT_DOUBLE_EQ(stats.frame_ms().max, 4.0);
    EXPECT_DOUBLE_EQ(stats.last_frame_ms(), 4.0);
    EXPECT_EQ(stats.history().size(), 5u) << "the graph shows every frame";
    for (double gpu : {9.0, 9.0, 9.0, 1.0}) {
        CompletedSummary done;
        done.gpu_ms = gpu;
        done.presented = true;
        stats.record_completed(done);
    }
    EXPECT_EQ(stats.gpu_ms().count, 1u);
    EXPECT_DOUBLE_EQ(stats.gpu_ms().p50, 1.0);
    EXPECT_EQ(stats.presented_frames(), 4u);
}

TEST(FrameStatsTest, HistoryKeepsTheLastFrames) {
    FrameStats stats(0, 4);
    for (int i = 1; i <= 10; ++i) stats.record_frame(i);
    ASSERT_EQ(stats.history().size(), 4u);
    EXPECT_FLOAT_EQ(stats.history().front(), 7.0f);
    EXPECT_FLOAT_EQ(stats.history().back(), 10.0f);
}

TEST(FrameStatsTest, RatesCoverTheLastSecond) {
    FrameStats stats;
    SessionCounters counters;
    EXPECT_DOUBLE_EQ(stats.rates().commits, 0.0) << "no samples yet";
    for (int step = 0; step <= 40; ++step) {                          // 4 s, a sample every 100 ms
        counters.frames = std::uint64_t(step) * 6;                    // 60 frames/s
        counters.streamer.table.commits = std::uint64_t(step) * 100;  // 1000/s
        counters.streamer.table.evictions = std::uint64_t(step) * 50;
        counters.streamer.pages_filled = std::uint64_t(step) * 100;
        counters.streamer.bytes_filled = std::uint64_t(step) * 100 * 2 * 1024 * 1024;
        stats.record_counters(step * 0.1, counters);
    }
    const Rates rates = stats.rates();
    EXPECT_NEAR(rates.frames, 60, 1e-6);
    EXPECT_NEAR(rates.commits, 1000, 1e-6);
    EXPECT_NEAR(rates.evictions, 500, 1e-6);
    EXPECT_NEAR(rates.pages_streamed, 1000, 1e-6);
    EXPECT_NEAR(rates.bytes_streamed, 1000.0 * 2 * 1024 * 1024, 1e-3);
}

RunReport sample_report() {
    RunReport r;
    r.backend = "cuda";
    r.device = "NVIDIA H100 80GB HBM3";
    r.camera_path = "benchmark";
    r.frames = 600;
    r.seconds = 2.0;
    r.frame_ms = percentiles({1.0, 2.0, 3.0, 4.5});
    r.pages_streamed = 5000;
    r.pages_per_second = 2500;
    r.bytes_streamed = 5000ull * 2 * 1024 * 1024;
    r.validation = true;
    return r;
}

TEST(RunReportTest, JsonHasTheFieldsScriptsRead) {
    const nlohmann::json json = to_json(sample_report());
    for (const char* field : {"frames",
                              "frame_ms_p50",
                              "frame_ms_p99",
                              "pages_committed",
                              "pages_evicted",
                              "bytes_streamed",
                              "pages_streamed",
                              "pages_streamed_per_second",
                              "validation_errors",
                              "validation_warnings",
                              "validation_messages",
                              "backend",
                              "device",
                              "seconds",
                              "gpu_ms",
                              "pool",
                              "camera_path",
                              "width",
                              "height",
                              "budget_mib"}) {
        EXPECT_TRUE(json.contains(field)) << field;
    }
    EXPECT_EQ(json["frames"], 600);
    EXPECT_DOUBLE_EQ(json["frame_ms_p99"].get<double>(), 4.5);
    EXPECT_EQ(json["backend"], "cuda");
    EXPECT_TRUE(json["goal"]["met"].get<bool>()) << "p99 4.5 ms at 2500 pages/s";
}

TEST(RunReportTest, TheGoalLineSaysMetOrNotForTheBenchmarkFlightOnly) {
    RunReport report = sample_report();
    EXPECT_NE(summary_text(report).find("goal p99 <= 5.0 ms at >= 2000 pages/s: met"),
              std::string::npos);
    report.pages_per_second = 1500;
    EXPECT_NE(summary_text(report).find(": not met"), std::string::npos);
    report.camera_path = "dive";
    EXPECT_EQ(summary_text(report).find("goal"), std::string::npos);
    EXPECT_FALSE(to_json(report).contains("goal"));
}

}  // namespace
}  // namespace vtpage::viewer
