// Time to full detail after a camera cut: from the first frame drawn at a new view, the frames
// (and the frame loop's milliseconds) until one shows at least full_detail_share of its plane's
// pixels at the level they wanted (SampleQuality). Frames complete frames_in_flight after they
// are submitted, so a completed frame counts for the cut it was drawn after, and a cut is over
// once a frame of the next one completes (or the run ends).
//
// Full detail is due only where the budget holds the view's working set: a cut that does not
// reach it is "over budget" when a frame of its view asked for more pages (parents included)
// than the budget holds beside its pinned pages (set_budget_pages: the streamer's free pages),
// else "not reached" (the streamer did not get there before the next cut).
//
//   FullDetailTracker tracker(budget_pages);
//   tracker.submitted(frame_number, seconds, path.cut_between(t_before, t), pages_filled);
//   tracker.completed(done.frame, done.quality, done.requests, done.resident_requests);
//   for (const CutRecovery& cut : tracker.closed_cuts()) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "renderer/sample_quality.hpp"

namespace vtpage::viewer {

// The share of the plane's pixels at their wanted level that counts as full detail.
inline constexpr double full_detail_share = 0.99;

enum class CutOutcome {
    pending,      // the view is still held and has not reached full detail yet
    reached,      // a frame of the view had full detail
    over_budget,  // not reached; the view asked for more pages than the budget holds
    not_reached,  // not reached before the next cut or the end of the run, within the budget
};
std::string_view to_string(CutOutcome outcome);

struct CutRecovery {
    std::uint64_t frame = 0;  // the first frame drawn after the cut
    double seconds = 0;       // when it was submitted, on the frame loop's clock
    CutOutcome outcome = CutOutcome::pending;
    // Reached: frames drawn after `frame` before the first with full detail (0: `frame` itself
    // had it), and the frame loop's time from submitting `frame` to submitting that one.
    std::uint64_t frames = 0;
    double ms = 0;
    double best_share = 0;              // the largest share at the wanted level the view showed
    std::size_t working_set_pages = 0;  // the most pages a frame of the view asked for
    bool settled = false;  // a frame of the view found every page it asked for resident
    // Reached: the pages the streamer filled between submitting `frame` and submitting the
    // frame with full detail, and their rate over `ms` (a cut's wait is compared with the
    // streamer's pages per second: docs/viewer.md).
    std::uint64_t pages_filled = 0;
    double pages_per_second() const { return ms > 0 ? double(pages_filled) * 1000.0 / ms : 0; }
};

class FullDetailTracker {
public:
    // budget_pages 0: unknown, and no cut is over budget. A view held for timeout_frames
    // without reaching full detail is closed then.
    explicit FullDetailTracker(std::size_t budget_pages = 0, std::size_t timeout_frames = 1 << 16)
        : budget_pages_(budget_pages), timeout_frames_(timeout_frames) {}
    void set_budget_pages(std::size_t pages) noexcept { budget_pages_ = pages; }

    // Frame `frame` was submitted at `seconds`, when the streamer had filled `pages_filled`
    // pages since it started; after_cut: it is the first of a new view.
    void submitted(std::uint64_t frame, double seconds, bool after_cut,
                   std::uint64_t pages_filled = 0);
    // Frame `frame` completed: what its pixels got, and the pages its feedback asked for (and
    // of those, how many were resident). Frames whose quality was not measured decide nothing.
    void completed(std::uint64_t frame, const SampleQuality& quality, std::size_t requested_pages,
                   std::size_t resident_requested_pages);

    // Every cut so far, oldest first; the newest may be pending.
    const std::vector<CutRecovery>& cuts() const noexcept { return cuts_; }
    // The cuts as if the run ended now: pending ones are over budget or not reached.
    std::vector<CutRecovery> closed_cuts() const;

private:
    void close(CutRecovery& cut) const;
    struct Submission {
        std::uint64_t frame = 0;
        double seconds = 0;
        std::uint64_t pages_filled = 0;
    };
    // The submission of `frame` since the current cut, or the cut's own.
    Submission submission(std::uint64_t frame) const;

    std::size_t budget_pages_;
    std::size_t timeout_frames_;
    std::vector<CutRecovery> cuts_;
    std::vector<std::uint64_t> cut_pages_filled_;  // the streamer's count as each cut was drawn
    std::size_t current_ = 0;                      // the cut that completed frames now belong to
    // The frames submitted since the current cut.
    std::deque<Submission> submissions_;
};

}  // namespace vtpage::viewer
