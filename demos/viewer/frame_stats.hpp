// What the viewer measures while it runs: each frame's time (the loop's wall time from one
// frame to the next, what a user feels) and GPU time, percentiles over the run, a short history
// for the HUD's graph, the streaming counters turned into rates over the last second, and what a
// user sees of streaming: the share of pixels at the level they wanted, the levels missing, and
// the time to full detail after camera cuts (full_detail_tracker.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

#include "full_detail_tracker.hpp"
#include "renderer/sample_quality.hpp"
#include "streaming_session.hpp"

namespace vtpage::viewer {

struct Percentiles {
    std::size_t count = 0;
    double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles (p99 of 600 values is the 594th smallest).
Percentiles percentiles(std::vector<double> values);

// Per second, over the last second or so.
struct Rates {
    double frames = 0;
    double commits = 0;
    double evictions = 0;
    double pages_streamed = 0;
    double bytes_streamed = 0;
};

// The sample quality of the frames (SampleQuality) over a run.
struct QualityFigures {
    bool measured = false;  // some frame was measured (sample_quality.hpp)
    // Measured frames with the plane in view, warm-up frames left out.
    std::size_t frames = 0;
    double share_p50 = 0, share_min = 0, share_mean = 0;  // share of pixels at the wanted level
    double missing_p50 = 0, missing_max = 0, missing_mean = 0;  // mean levels missing
    SampleQuality last;                                         // the last measured frame
};

// The cuts' times to full detail.
struct FullDetailFigures {
    std::size_t cuts = 0, reached = 0, over_budget = 0, not_reached = 0, pending = 0;
    Percentiles frames, ms;  // of the cuts that reached full detail
};
FullDetailFigures full_detail_figures(const std::vector<CutRecovery>& cuts);

class FrameStats {
public:
    // The first `warmup_frames` frames are left out of the percentiles.
    explicit FrameStats(std::uint64_t warmup_frames = 0, std::size_t history_length = 240);

    void record_frame(double frame_ms);
    // A frame was submitted (its renderer frame number) at `seconds` on the loop's clock;
    // after_cut: the first frame of a new view (the camera path cut). The streamer's pages
    // filled are taken from the newest completed frame (handed back by the same render call).
    void record_submitted(std::uint64_t frame, double seconds, bool after_cut);
    // A completed frame's GPU time and sample quality, and the CPU time of the render() call
    // that handed it back.
    void record_completed(const CompletedSummary& completed);
    // The settled image's quality (StreamingSession::settle) as the run's last, leaving the
    // per-frame figures to the flight's frames.
    void record_settled_quality(const SampleQuality& quality) {
        if (quality.measured) last_quality_ = quality;
    }
    // What decides whether a cut that misses full detail was over budget.
    void set_budget_pages(std::size_t pages) noexcept { cuts_.set_budget_pages(pages); }
    // Streaming counters at `seconds` since the start; rates() compares the newest with the
    // newest sample at least a second older.
    void record_counters(double seconds, const SessionCounters& counters);

    std::uint64_t frames() const noexcept { return frames_; }
    std::uint64_t presented_frames() const noexcept { return presented_; }
    Percentiles frame_ms() const;
    Percentiles gpu_ms() const;
    Percentiles textured_pass_ms() const;
    Percentiles render_ms() const;
    Percentiles feedback_ms() const;
    // The feedback worker's time per feedback it processed (vt::FeedbackFrameResult), and the
    // render thread's copy out of the readback buffer (part of feedback_ms).
    Percentiles process_ms() const;
    Percentiles request_ms() const;
    Percentiles complete_ms() const;
    Percentiles copy_ms() const;
    Percentiles handoff_ms() const;  // from the hand-off to the end of processing
    // Per completed frame, warm-up frames included: the streamer's pending requests, and the
    // pages its upload made visible.
    Percentiles queue_depth() const;
    Percentiles made_visible() const;
    Rates rates() const;
    QualityFigures quality() const;
    // The cuts so far (the newest may be pending), or as if the run ended now.
    const std::vector<CutRecovery>& cuts() const noexcept { return cuts_.cuts(); }
    std::vector<CutRecovery> closed_cuts() const { return cuts_.closed_cuts(); }
    // Frame times of the last frames, oldest first (the HUD's graph).
    const std::deque<float>& history() const noexcept { return history_; }
    double last_frame_ms() const noexcept { return history_.empty() ? 0 : history_.back(); }
    // Seconds into the frame loop when the first frame had been rendered (0: none yet).
    void record_rendered(double seconds) noexcept {
        if (first_rendered_seconds_ == 0) first_rendered_seconds_ = seconds;
    }
    double first_rendered_seconds() const noexcept { return first_rendered_seconds_; }

private:
    struct CounterSample {
        double seconds = 0;
        std::uint64_t frames = 0;
        std::uint64_t commits = 0;
        std::uint64_t evictions = 0;
        std::uint64_t pages = 0;
        std::uint64_t bytes = 0;
    };
    std::uint64_t warmup_;
    std::size_t history_length_;
    std::uint64_t frames_ = 0;
    std::uint64_t gpu_frames_ = 0;
    std::uint64_t presented_ = 0;
    double first_rendered_seconds_ = 0;
    std::vector<double> frame_ms_;
    std::vector<double> gpu_ms_;
    std::vector<double> textured_pass_ms_;
    std::vector<double> render_ms_;
    std::vector<double> feedback_ms_;
    std::vector<double> copy_ms_, process_ms_, request_ms_, complete_ms_, handoff_ms_;
    std::vector<double> share_at_wanted_, levels_missing_;
    std::vector<double> queue_depth_, made_visible_;
    SampleQuality last_quality_;
    FullDetailTracker cuts_;
    std::uint64_t pages_filled_ = 0;  // the newest completed frame's CompletedSummary::pages_filled
    std::deque<float> history_;
    std::deque<CounterSample> samples_;
};

}  // namespace vtpage::viewer
