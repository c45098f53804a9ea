#include "frame_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vtpage::viewer {

Percentiles percentiles(std::vector<double> values) {
    Percentiles result;
    result.count = values.size();
    if (values.empty()) return result;
    std::sort(values.begin(), values.end());
    auto rank = [&](double p) {
        const auto index = static_cast<std::size_t>(std::ceil(p * double(values.size())));
        return values[std::clamp<std::size_t>(index, 1, values.size()) - 1];
    };
    result.p50 = rank(0.50);
    result.p90 = rank(0.90);
    result.p99 = rank(0.99);
    result.max = values.back();
    result.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    return result;
}

FrameStats::FrameStats(std::uint64_t warmup_frames, std::size_t history_length)
    : warmup_(warmup_frames), history_length_(history_length) {}

void FrameStats::record_frame(double frame_ms) {
    ++frames_;
    if (frames_ > warmup_) frame_ms_.push_back(frame_ms);
    history_.push_back(float(frame_ms));
    if (history_.size() > history_length_) history_.pop_front();
}

void FrameStats::record_submitted(std::uint64_t frame, double seconds, bool after_cut) {
    cuts_.submitted(frame, seconds, after_cut, pages_filled_);
}

void FrameStats::record_completed(const CompletedSummary& completed) {
    ++gpu_frames_;
    presented_ += completed.presented;
    const SampleQuality& quality = completed.quality;
    // A cut whose view wants more than the budget holds beside the pinned pages is over budget.
    if (completed.free_budget_pages != 0) cuts_.set_budget_pages(completed.free_budget_pages);
    cuts_.completed(completed.frame, quality, completed.requests, completed.resident_requests);
    pages_filled_ = std::max(pages_filled_, completed.pages_filled);
    if (quality.measured) last_quality_ = quality;
    queue_depth_.push_back(double(completed.queue_depth));
    made_visible_.push_back(double(completed.made_visible));
    if (gpu_frames_ <= warmup_) return;
    if (quality.measured && quality.plane_pixels > 0) {
        share_at_wanted_.push_back(quality.share_at_wanted_level());
        levels_missing_.push_back(quality.mean_levels_missing());
    }
    if (completed.gpu_ms > 0) gpu_ms_.push_back(completed.gpu_ms);
    if (completed.textured_pass_ms > 0) textured_pass_ms_.push_back(completed.textured_pass_ms);
    render_ms_.push_back(completed.render_ms);
    feedback_ms_.push_back(completed.feedback_ms);
    copy_ms_.push_back(completed.copy_ms);
    for (const vt::FeedbackFrameResult& result : completed.processed) {
        process_ms_.push_back(result.process_ms);
        request_ms_.push_back(result.request_ms);
        complete_ms_.push_back(result.complete_ms);
        handoff_ms_.push_back(result.handoff_ms);
    }
}

void FrameStats::record_counters(double seconds, const SessionCounters& counters) {
    samples_.push_back({seconds, counters.frames, counters.streamer.table.commits,
                        counters.streamer.table.evictions, counters.streamer.pages_filled,
                        counters.streamer.bytes_filled});
    // Keep what the next rates() needs: the newest sample older than a second, and newer ones.
    while (samples_.size() > 2 && samples_[1].seconds <= seconds - 1.0) samples_.pop_front();
}

Percentiles FrameStats::frame_ms() const { return percentiles(frame_ms_); }

Percentiles FrameStats::gpu_ms() const { return percentiles(gpu_ms_); }

Percentiles FrameStats::textured_pass_ms() const { return percentiles(textured_pass_ms_); }

Percentiles FrameStats::render_ms() const { return percentiles(render_ms_); }

Percentiles FrameStats::feedback_ms() const { return percentiles(feedback_ms_); }

Percentiles FrameStats::process_ms() const { return percentiles(process_ms_); }

Percentiles FrameStats::request_ms() const { return percentiles(request_ms_); }

Percentiles FrameStats::complete_ms() const { return percentiles(complete_ms_); }

Percentiles FrameStats::copy_ms() const { return percentiles(copy_ms_); }

Percentiles FrameStats::handoff_ms() const { return percentiles(handoff_ms_); }

Percentiles FrameStats::queue_depth() const { return percentiles(queue_depth_); }

Percentiles FrameStats::made_visible() const { return percentiles(made_visible_); }

QualityFigures FrameStats::quality() const {
    QualityFigures figures;
    figures.measured = last_quality_.measured;
    figures.last = last_quality_;
    figures.frames = share_at_wanted_.size();
    if (share_at_wanted_.empty()) return figures;
    const Percentiles share = percentiles(share_at_wanted_);
    figures.share_p50 = share.p50;
    figures.share_mean = share.mean;
    figures.share_min = *std::min_element(share_at_wanted_.begin(), share_at_wanted_.end());
    const Percentiles missing = percentiles(levels_missing_);
    figures.missing_p50 = missing.p50;
    figures.missing_max = missing.max;
    figures.missing_mean = missing.mean;
    return figures;
}

FullDetailFigures full_detail_figures(const std::vector<CutRecovery>& cuts) {
    FullDetailFigures figures;
    figures.cuts = cuts.size();
    std::vector<double> frames, ms;
    for (const CutRecovery& cut : cuts) {
        switch (cut.outcome) {
            case CutOutcome::reached:
                ++figures.reached;
                frames.push_back(double(cut.frames));
                ms.push_back(cut.ms);
                break;
            case CutOutcome::over_budget:
                ++figures.over_budget;
                break;
            case CutOutcome::not_reached:
                ++figures.not_reached;
                break;
            case CutOutcome::pending:
                ++figures.pending;
                break;
        }
    }
    figures.frames = percentiles(std::move(frames));
    figures.ms = percentiles(std::move(ms));
    return figures;
}

Rates FrameStats::rates() const {
    Rates rates;
    if (samples_.size() < 2) return rates;
    const CounterSample& a = samples_.front();
    const CounterSample& b = samples_.back();
    const double dt = b.seconds - a.seconds;
    if (dt <= 0) return rates;
    rates.frames = double(b.frames - a.frames) / dt;
    rates.commits = double(b.commits - a.commits) / dt;
    rates.evictions = double(b.evictions - a.evictions) / dt;
    rates.pages_streamed = double(b.pages - a.pages) / dt;
    rates.bytes_streamed = double(b.bytes - a.bytes) / dt;
    return rates;
}

}  // namespace vtpage::viewer
