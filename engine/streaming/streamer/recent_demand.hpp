// What the view asked for in its last few frames (StreamerSettings::recent_frames): the pages
// it samples, though its feedback need not name each of them every frame. From it the streamer
// tells how far the view's pages exceed what the budget can hold for them, and counts refaults:
// pages asked for again within those frames of their eviction, the mark of a view that trades
// its own pages for each other.
//
// Not thread-safe: the request book's lock guards it (RequestBook::demand).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <utility>

#include "vtpage/core/page_table.hpp"

namespace vtpage::vt::streamer_detail {

class RecentDemand {
public:
    explicit RecentDemand(FrameId recent_frames)
        : window_(recent_frames == 0 ? 1 : recent_frames) {}

    // The view asked for `page` in `frame`; true when it was evicted within the window before
    // (a refault).
    bool asked(PageIndex page, FrameId frame);
    void evicted(PageIndex page, FrameId frame);
    // Distinct pages asked for in the window that ends with `frame`.
    std::size_t pages(FrameId frame);
    // How many of them `holds(page)` says yes to.
    template <typename Holds>
    std::size_t count(FrameId frame, const Holds& holds) {
        forget_before(frame);
        std::size_t n = 0;
        for (const auto& [page, last] : last_asked_) n += holds(page) ? 1 : 0;
        return n;
    }
    FrameId window() const noexcept { return window_; }

    // Holds `page` (asked for again soon after its eviction, while the view was over budget
    // with `free_pages` pages beside the pinned ones): held(page, f) is true up to frame
    // `frame + frames`, or until the view has fitted the budget for a whole window, or fits a
    // budget that grew (fits): a view that fits for a frame or two between two halves that do
    // not fit together is still trading them.
    void hold(PageIndex page, FrameId frame, FrameId frames, std::size_t free_pages);
    bool held(PageIndex page, FrameId frame);
    void fits(bool fits_now, FrameId frame, std::size_t free_pages);
    std::size_t held_pages() const noexcept { return held_until_.size(); }
    // A page asked for again within this many frames of its eviction is a refault, whatever
    // the window.
    static constexpr FrameId refault_frames = 8;

private:
    void forget_before(FrameId frame);

    FrameId window_;
    std::unordered_map<PageIndex, FrameId> last_asked_;
    std::deque<std::pair<FrameId, PageIndex>> asks_;  // in frame order; stale once asked again
    std::unordered_map<PageIndex, FrameId> evicted_in_;
    std::deque<std::pair<FrameId, PageIndex>> evictions_;
    std::unordered_map<PageIndex, FrameId> held_until_;
    std::optional<FrameId> fitting_since_;  // the first frame of the view fitting, while held
    std::size_t free_while_held_ = 0;       // the fewest free pages seen while pages are held
    void release_holds() noexcept;
};

}  // namespace vtpage::vt::streamer_detail
