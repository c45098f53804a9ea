#include "full_detail_tracker.hpp"

#include <algorithm>

namespace vtpage::viewer {

std::string_view to_string(CutOutcome outcome) {
    switch (outcome) {
        case CutOutcome::pending:
            return "pending";
        case CutOutcome::reached:
            return "reached";
        case CutOutcome::over_budget:
            return "over budget";
        case CutOutcome::not_reached:
            return "not reached";
    }
    return "unknown";
}

void FullDetailTracker::submitted(std::uint64_t frame, double seconds, bool after_cut,
                                  std::uint64_t pages_filled) {
    if (after_cut) {
        cuts_.push_back(CutRecovery{.frame = frame, .seconds = seconds});
        cut_pages_filled_.push_back(pages_filled);
    }
    if (cuts_.empty()) return;  // nothing to time yet
    const bool timing =
        cuts_[current_].outcome == CutOutcome::pending || current_ + 1 < cuts_.size();
    if (!timing) return;
    submissions_.push_back(Submission{frame, seconds, pages_filled});
    // A view held this long without full detail will not get there (a window flown by hand).
    if (submissions_.size() > timeout_frames_ && current_ + 1 == cuts_.size()) {
        close(cuts_[current_]);
        submissions_.clear();
    }
}

void FullDetailTracker::completed(std::uint64_t frame, const SampleQuality& quality,
                                  std::size_t requested_pages,
                                  std::size_t resident_requested_pages) {
    if (cuts_.empty() || frame < cuts_[current_].frame) return;  // drawn before the cut
    // A frame of a later cut: the cuts before it are over.
    while (current_ + 1 < cuts_.size() && cuts_[current_ + 1].frame <= frame) {
        close(cuts_[current_]);
        ++current_;
    }
    CutRecovery& cut = cuts_[current_];
    while (!submissions_.empty() && submissions_.front().frame < cut.frame) {
        submissions_.pop_front();
    }
    if (cut.outcome != CutOutcome::pending || !quality.measured) return;
    const double share = quality.share_at_wanted_level();
    cut.best_share = std::max(cut.best_share, share);
    cut.working_set_pages = std::max(cut.working_set_pages, requested_pages);
    cut.settled = cut.settled || requested_pages == resident_requested_pages;
    if (share < full_detail_share) return;
    cut.outcome = CutOutcome::reached;
    cut.frames = frame - cut.frame;
    const Submission full = submission(frame);
    cut.ms = (full.seconds - cut.seconds) * 1000.0;
    cut.pages_filled = full.pages_filled - std::min(full.pages_filled, cut_pages_filled_[current_]);
    if (current_ + 1 == cuts_.size()) submissions_.clear();  // nothing left to time
}

std::vector<CutRecovery> FullDetailTracker::closed_cuts() const {
    std::vector<CutRecovery> closed = cuts_;
    for (CutRecovery& cut : closed) close(cut);
    return closed;
}

void FullDetailTracker::close(CutRecovery& cut) const {
    if (cut.outcome != CutOutcome::pending) return;
    const bool over = budget_pages_ != 0 && cut.working_set_pages > budget_pages_;
    cut.outcome = over ? CutOutcome::over_budget : CutOutcome::not_reached;
}

FullDetailTracker::Submission FullDetailTracker::submission(std::uint64_t frame) const {
    const auto found =
        std::lower_bound(submissions_.begin(), submissions_.end(), frame,
                         [](const Submission& entry, std::uint64_t f) { return entry.frame < f; });
    if (found != submissions_.end() && found->frame == frame) return *found;
    return Submission{cuts_[current_].frame, cuts_[current_].seconds, cut_pages_filled_[current_]};
}

}  // namespace vtpage::viewer
