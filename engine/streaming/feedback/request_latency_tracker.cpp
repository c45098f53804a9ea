#include "vtpage/streaming/feedback/request_latency_tracker.hpp"

#include <algorithm>
#include <cmath>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

RequestLatencyTracker::RequestLatencyTracker(RequestLatencySettings settings)
    : settings_(settings) {
    if (settings_.max_tracked_pages == 0) {
        throw Error(Errc::invalid_argument, "RequestLatencyTracker",
                    "max_tracked_pages must not be 0");
    }
}

std::size_t RequestLatencyTracker::note_requested(FrameId frame, std::span<const PageIndex> pages) {
    const Clock::time_point now = Clock::now();
    std::size_t added = 0;
    std::lock_guard lock(mutex_);
    for (PageIndex page : pages) {
        if (tracked_.count(page)) continue;
        if (tracked_.size() >= settings_.max_tracked_pages) {
            ++refused_;
            continue;
        }
        tracked_.emplace(page, Request{frame, now});
        ++added;
    }
    return added;
}

void RequestLatencyTracker::note_visible(FrameId frame, std::span<const PageIndex> pages,
                                         Clock::time_point at) {
    std::lock_guard lock(mutex_);
    for (PageIndex page : pages) {
        auto found = tracked_.find(page);
        if (found == tracked_.end()) continue;
        const Request request = found->second;
        tracked_.erase(found);
        ++frame_counts_[frame > request.frame ? frame - request.frame : 0];
        ++samples_;
        milliseconds_.record(at > request.time ? at - request.time : Clock::duration{0});
    }
}

void RequestLatencyTracker::note_dropped(std::span<const PageIndex> pages) {
    std::lock_guard lock(mutex_);
    for (PageIndex page : pages) dropped_ += tracked_.erase(page);
}

// The smallest latency with at least `share` of the samples at or below it.
std::uint64_t RequestLatencyTracker::frames_at_rank_nolock(double share) const {
    const auto rank =
        std::max<std::uint64_t>(1, std::uint64_t(std::ceil(share * double(samples_))));
    std::uint64_t seen = 0;
    for (const auto& [frames, count] : frame_counts_) {
        seen += count;
        if (seen >= rank) return frames;
    }
    return 0;
}

RequestLatencyStatistics RequestLatencyTracker::statistics() const {
    RequestLatencyStatistics result;
    std::lock_guard lock(mutex_);
    result.samples = samples_;
    result.tracked = tracked_.size();
    result.dropped = dropped_;
    result.refused = refused_;
    if (samples_ == 0) return result;
    result.frames_p50 = frames_at_rank_nolock(0.50);
    result.frames_p99 = frames_at_rank_nolock(0.99);
    result.frames_max = frame_counts_.rbegin()->first;
    const LatencySummary ms = milliseconds_.summary();
    result.ms_p50 = ms.p50_us / 1e3;
    result.ms_p99 = ms.p99_us / 1e3;
    result.ms_max = ms.max_us / 1e3;
    return result;
}

void RequestLatencyTracker::reset() {
    std::lock_guard lock(mutex_);
    frame_counts_.clear();
    samples_ = 0;
    dropped_ = 0;
    refused_ = 0;
    milliseconds_.reset();
}

}  // namespace vtpage::vt
