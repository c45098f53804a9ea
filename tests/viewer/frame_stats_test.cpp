// The viewer's measurements: percentiles, warm-up frames left out, rates over the last second,
// the sample quality and the time to full detail after camera cuts on made-up frame sequences,
// and the report's JSON and summary.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

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

// What a frame's pixels got: `share` of 1000 plane pixels at their wanted level, the others one
// level short.
SampleQuality quality_of(double share) {
    SampleQuality quality;
    quality.measured = true;
    quality.plane_pixels = 1000;
    quality.pixels_at_wanted_level = std::uint64_t(std::lround(share * 1000));
    quality.missing_levels = 1000 - quality.pixels_at_wanted_level;
    return quality;
}

// The viewer's frame loop with two frames in flight: frame n is submitted at n * 10 ms and
// completes (and is recorded) when frame n + 2 is submitted, as render() hands it back.
struct FrameLoop {
    FrameStats stats{0};
    std::uint64_t submitted = 0;
    std::uint64_t pages_filled = 0;     // the streamer's count as each frame completes
    std::size_t free_budget_pages = 0;  // the budget less pinned pages, as feedback found it
    std::deque<CompletedSummary> in_flight;

    // A frame that will show `share` at its wanted level, asking for `requests` pages of which
    // `resident` are resident.
    void frame(double share, bool after_cut = false, std::size_t requests = 10,
               std::size_t resident = 10) {
        ++submitted;
        CompletedSummary done;
        done.frame = submitted;
        done.quality = quality_of(share);
        done.requests = requests;
        done.resident_requests = resident;
        done.free_budget_pages = free_budget_pages;
        in_flight.push_back(done);
        if (in_flight.size() > 2) {
            in_flight.front().pages_filled = pages_filled;
            stats.record_completed(in_flight.front());
            in_flight.pop_front();
        }
        stats.record_submitted(submitted, double(submitted) * 0.01, after_cut);
    }
    void finish() {
        for (CompletedSummary& done : in_flight) {
            done.pages_filled = pages_filled;
            stats.record_completed(done);
        }
        in_flight.clear();
    }
};

TEST(SampleQualityStatsTest, ShareAtTheWantedLevelOverTheRunWithoutWarmUp) {
    FrameStats stats(2);
    for (double share : {0.0, 0.1, 0.5, 0.9, 1.0, 0.7}) {
        CompletedSummary done;
        done.quality = quality_of(share);
        stats.record_completed(done);
    }
    CompletedSummary forward;  // not measured: left out, and not the last
    stats.record_completed(forward);
    const QualityFigures q = stats.quality();
    EXPECT_TRUE(q.measured);
    EXPECT_EQ(q.frames, 4u) << "the two warm-up frames are left out";
    EXPECT_DOUBLE_EQ(q.share_min, 0.5);
    EXPECT_DOUBLE_EQ(q.share_p50, 0.7);
    EXPECT_DOUBLE_EQ(q.share_mean, (0.5 + 0.9 + 1.0 + 0.7) / 4);
    EXPECT_DOUBLE_EQ(q.last.share_at_wanted_level(), 0.7);
    EXPECT_DOUBLE_EQ(q.missing_max, 0.5);
    EXPECT_NEAR(q.last.mean_levels_missing(), 0.3, 1e-12);

    FrameStats unmeasured;
    unmeasured.record_completed(forward);
    EXPECT_FALSE(unmeasured.quality().measured);
    EXPECT_EQ(unmeasured.quality().frames, 0u);
}

TEST(SampleQualityStatsTest, TimeToFullDetailCountsFromTheFirstFrameAfterTheCut) {
    FrameLoop loop;
    for (int i = 0; i < 4; ++i) loop.frame(1.0);  // the old view at full detail
    loop.frame(0.3, true);                        // frame 5: the cut
    for (double share : {0.6, 0.9, 0.989, 0.99, 1.0}) loop.frame(share);
    loop.finish();
    const std::vector<CutRecovery> cuts = loop.stats.closed_cuts();
    ASSERT_EQ(cuts.size(), 1u);
    EXPECT_EQ(cuts[0].frame, 5u);
    EXPECT_EQ(cuts[0].outcome, CutOutcome::reached);
    EXPECT_EQ(cuts[0].frames, 4u) << "frame 9 is the first at 99 %; frames 3 and 4, completed "
                                     "after the cut, showed the old view";
    EXPECT_NEAR(cuts[0].ms, 40.0, 1e-9);
    EXPECT_DOUBLE_EQ(cuts[0].best_share, 0.99);
    // A cut whose first frame already has full detail took no frames.
    loop.frame(1.0, true);
    loop.finish();
    EXPECT_EQ(loop.stats.closed_cuts().back().outcome, CutOutcome::reached);
    EXPECT_EQ(loop.stats.closed_cuts().back().frames, 0u);
}

TEST(SampleQualityStatsTest, ACutThatMissesFullDetailIsOverBudgetOnlyWhereTheViewAskedForMore) {
    FrameLoop loop;
    loop.stats.set_budget_pages(50);
    loop.frame(1.0);
    loop.frame(0.2, true, 80, 45);  // asks for more than the budget holds
    for (int i = 0; i < 10; ++i) loop.frame(0.9, false, 80, 48);
    loop.frame(0.2, true, 30, 10);  // within the budget, but the next cut comes first
    for (int i = 0; i < 10; ++i) loop.frame(0.95, false, 30, 30);
    loop.frame(0.2, true, 30, 10);  // still held as the run ends
    loop.frame(0.5, false, 30, 20);
    loop.finish();
    const std::vector<CutRecovery>& live = loop.stats.cuts();
    ASSERT_EQ(live.size(), 3u);
    EXPECT_EQ(live[0].outcome, CutOutcome::over_budget);
    EXPECT_EQ(live[0].working_set_pages, 80u);
    EXPECT_FALSE(live[0].settled);
    EXPECT_EQ(live[1].outcome, CutOutcome::not_reached);
    EXPECT_TRUE(live[1].settled) << "its pages were all resident, yet under 99 %";
    EXPECT_DOUBLE_EQ(live[1].best_share, 0.95);
    EXPECT_EQ(live[2].outcome, CutOutcome::pending) << "the run has not ended for the HUD";
    const std::vector<CutRecovery> closed = loop.stats.closed_cuts();
    EXPECT_EQ(closed[2].outcome, CutOutcome::not_reached);
    const FullDetailFigures figures = full_detail_figures(closed);
    EXPECT_EQ(figures.cuts, 3u);
    EXPECT_EQ(figures.reached, 0u);
    EXPECT_EQ(figures.over_budget, 1u);
    EXPECT_EQ(figures.not_reached, 2u);
    EXPECT_EQ(figures.frames.count, 0u);
}

TEST(SampleQualityStatsTest, ACutCountsThePagesFilledUntilFullDetailAndTheirRate) {
    FrameLoop loop;
    loop.frame(1.0);
    loop.frame(1.0);
    loop.pages_filled = 7;  // the old view's pages, filled before the cut's first frame completes
    loop.frame(0.1, true);  // frame 3: the cut
    for (int i = 0; i < 3; ++i) {
        loop.pages_filled += 20;
        loop.frame(0.5);
    }
    loop.pages_filled += 10;
    loop.frame(1.0);           // frame 7: full detail
    loop.pages_filled += 100;  // after full detail: not the cut's
    loop.frame(1.0);
    loop.finish();
    const std::vector<CutRecovery> cuts = loop.stats.closed_cuts();
    ASSERT_EQ(cuts.size(), 1u);
    ASSERT_EQ(cuts[0].outcome, CutOutcome::reached);
    EXPECT_EQ(cuts[0].frames, 4u);
    // From the cut's submission (7 pages filled) to that of frame 7, the first with full
    // detail (7 + 3 x 20 + 10): the 100 filled after it are not the cut's.
    EXPECT_EQ(cuts[0].pages_filled, 70u);
    EXPECT_NEAR(cuts[0].pages_per_second(), 70.0 / 0.040, 1e-6);
}

TEST(SampleQualityStatsTest, ACutIsOverBudgetAgainstTheBudgetLessItsPinnedPages) {
    FrameLoop loop;
    loop.stats.set_budget_pages(50);  // the whole budget, before any feedback
    loop.free_budget_pages = 40;      // tails and packed levels pin 10
    loop.frame(1.0);
    loop.frame(0.2, true, 45, 30);  // fits the budget, not what is left of it
    for (int i = 0; i < 6; ++i) loop.frame(0.9, false, 45, 38);
    loop.frame(0.2, true, 40, 10);  // fits what is left, but the run ends first
    loop.frame(0.5, false, 40, 20);
    loop.finish();
    const std::vector<CutRecovery> closed = loop.stats.closed_cuts();
    ASSERT_EQ(closed.size(), 2u);
    EXPECT_EQ(closed[0].outcome, CutOutcome::over_budget);
    EXPECT_EQ(closed[1].outcome, CutOutcome::not_reached);
}

TEST(SampleQualityStatsTest, UnmeasuredFramesDecideNothingAndLongHoldsTimeOut) {
    FrameStats forward(0);
    CompletedSummary done;
    done.frame = 1;
    forward.record_submitted(1, 0.0, true);
    forward.record_completed(done);  // quality not measured
    EXPECT_EQ(forward.cuts().front().outcome, CutOutcome::pending);

    FullDetailTracker tracker(0, 8);
    tracker.submitted(1, 0.0, true);
    for (std::uint64_t frame = 2; frame <= 8; ++frame) {
        tracker.submitted(frame, 0.0, false);
        tracker.completed(frame - 1, quality_of(0.5), 5, 5);
    }
    EXPECT_EQ(tracker.cuts().front().outcome, CutOutcome::pending) << "held 8 frames";
    tracker.submitted(9, 0.0, false);
    EXPECT_EQ(tracker.cuts().front().outcome, CutOutcome::not_reached) << "held 9 frames";
    tracker.completed(9, quality_of(1.0), 5, 5);
    EXPECT_EQ(tracker.cuts().front().outcome, CutOutcome::not_reached) << "decided already";
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

TEST(RunReportTest, QualityIsReportedWhereMeasuredAndSaidToBeNotMeasuredElsewhere) {
    RunReport report = sample_report();
    EXPECT_EQ(to_json(report)["quality"], nlohmann::json({{"measured", false}}));
    EXPECT_NE(summary_text(report).find("not measured"), std::string::npos);

    report.quality.measured = true;
    report.quality.frames = 590;
    report.quality.share_p50 = 0.97;
    report.quality.share_min = 0.42;
    report.quality.last = quality_of(0.995);
    report.cuts = {
        CutRecovery{.frame = 100, .outcome = CutOutcome::reached, .frames = 12, .ms = 200},
        CutRecovery{.frame = 300, .outcome = CutOutcome::over_budget}};
    report.full_detail = full_detail_figures(report.cuts);
    const nlohmann::json quality = to_json(report)["quality"];
    EXPECT_EQ(quality["measured"], true);
    EXPECT_DOUBLE_EQ(quality["share_at_wanted_level"]["p50"].get<double>(), 0.97);
    EXPECT_DOUBLE_EQ(quality["share_at_wanted_level"]["min"].get<double>(), 0.42);
    EXPECT_DOUBLE_EQ(quality["share_at_wanted_level"]["last"].get<double>(), 0.995);
    EXPECT_NEAR(quality["mean_levels_missing"]["last"].get<double>(), 0.005, 1e-12);
    ASSERT_EQ(quality["cuts"].size(), 2u);
    EXPECT_EQ(quality["cuts"][0]["outcome"], "reached");
    EXPECT_EQ(quality["cuts"][0]["frames"], 12);
    EXPECT_EQ(quality["cuts"][1]["outcome"], "over budget");
    EXPECT_FALSE(quality["cuts"][1].contains("frames")) << "no time where it was not reached";
    EXPECT_EQ(quality["time_to_full_detail"]["reached"], 1);
    EXPECT_EQ(quality["time_to_full_detail"]["over_budget"], 1);
    EXPECT_DOUBLE_EQ(quality["time_to_full_detail"]["frames"]["max"].get<double>(), 12);
    const std::string text = summary_text(report);
    EXPECT_NE(text.find("| pixels at their wanted level p50 / min / last | 97.0 % / 42.0 % / "
                        "99.5 % |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("1 of 2 cuts: frames p50 12 / max 12, ms p50 200 / max 200; over "
                        "budget 1"),
              std::string::npos)
        << text;
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
