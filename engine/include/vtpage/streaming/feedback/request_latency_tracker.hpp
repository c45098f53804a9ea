// How long a viewer waits for a page: from the frame whose feedback first asked for it to the
// first frame that samples it (request-to-visible latency), in frames and in milliseconds.
//
//   RequestLatencyTracker latency;
//   feedback thread, for the pages a frame's feedback asks for that are not visible yet:
//     latency.note_requested(feedback_frame, pages);
//   render thread, for the pages an indirection upload makes visible to frame `frame`:
//     latency.note_visible(frame, pages);
//   pages evicted, cancelled or withdrawn before they became visible:
//     latency.note_dropped(pages);
//
// A page is tracked from its first request until it is visible or dropped: later requests of a
// tracked page do not move its start (the first request wins). Frames are counted exactly (a
// histogram of whole frame counts); milliseconds through a LatencyHistogram (about 3% wide
// buckets).
//
// Memory is bounded by max_tracked_pages. At the bound new pages are refused (counted), not the
// oldest forgotten: the oldest are the pages that have waited longest, and forgetting them would
// take exactly the slow tail out of p99. All members are thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <unordered_map>

#include "vtpage/core/latency_histogram.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::vt {

struct RequestLatencySettings {
    std::size_t max_tracked_pages = 65536;  // pages requested and not yet visible or dropped
};

struct RequestLatencyStatistics {
    std::uint64_t samples = 0;  // pages that became visible after a tracked request
    // Nearest rank: p99 of 200 samples is the 198th smallest.
    std::uint64_t frames_p50 = 0, frames_p99 = 0, frames_max = 0;
    double ms_p50 = 0, ms_p99 = 0, ms_max = 0;
    std::size_t tracked = 0;    // requested, neither visible nor dropped yet
    std::uint64_t dropped = 0;  // tracked pages evicted, cancelled or withdrawn first
    std::uint64_t refused = 0;  // requests not tracked: max_tracked_pages were
};

class RequestLatencyTracker {
public:
    // invalid_argument for max_tracked_pages 0.
    explicit RequestLatencyTracker(RequestLatencySettings settings = {});

    // Remembers the frame (and the time) of each page's first request; pages already tracked
    // keep theirs. Returns how many were newly tracked.
    std::size_t note_requested(FrameId frame, std::span<const PageIndex> pages);
    using Clock = std::chrono::steady_clock;

    // Pages made visible for frame `frame` (the first frame that samples them) at time `at`
    // (a caller that hands the news to another thread passes when it happened): each tracked
    // one gives a sample (frame - its request frame, 0 if the frame is older) and is forgotten.
    // Untracked pages are ignored.
    void note_visible(FrameId frame, std::span<const PageIndex> pages,
                      Clock::time_point at = Clock::now());
    // Tracked pages that will not become visible for their request: forgotten and counted.
    void note_dropped(std::span<const PageIndex> pages);

    RequestLatencyStatistics statistics() const;
    // Clears the figures (samples, dropped, refused) for a new phase of measurement; the pages
    // still tracked stay, since their requests are still out there.
    void reset();

private:
    struct Request {
        FrameId frame = 0;
        Clock::time_point time;
    };
    std::uint64_t frames_at_rank_nolock(double share) const;

    RequestLatencySettings settings_;
    mutable std::mutex mutex_;
    std::unordered_map<PageIndex, Request> tracked_;
    std::map<std::uint64_t, std::uint64_t> frame_counts_;  // latency in frames -> samples
    std::uint64_t samples_ = 0;
    std::uint64_t dropped_ = 0;
    std::uint64_t refused_ = 0;
    LatencyHistogram milliseconds_;
};

}  // namespace vtpage::vt
