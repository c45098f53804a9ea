#include "streaming/streamer/recent_demand.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

bool RecentDemand::asked(PageIndex page, FrameId frame) {
    forget_before(frame);
    FrameId& last = last_asked_[page];
    if (last != frame) {
        last = std::max(last, frame);
        asks_.emplace_back(frame, page);
    }
    auto evicted = evicted_in_.find(page);
    if (evicted == evicted_in_.end()) return false;
    evicted_in_.erase(evicted);
    return true;
}

void RecentDemand::evicted(PageIndex page, FrameId frame) {
    forget_before(frame);
    evicted_in_[page] = frame;
    evictions_.emplace_back(frame, page);
}

void RecentDemand::hold(PageIndex page, FrameId frame, FrameId frames, std::size_t free_pages) {
    free_while_held_ = held_until_.empty() ? free_pages : std::min(free_while_held_, free_pages);
    // Holds of pages never asked for again expire unseen: swept once there are many.
    constexpr std::size_t sweep_at = 4096;
    if (held_until_.size() >= sweep_at) {
        std::erase_if(held_until_, [&](const auto& entry) { return entry.second < frame; });
    }
    held_until_[page] = frame + frames;
}

bool RecentDemand::held(PageIndex page, FrameId frame) {
    auto found = held_until_.find(page);
    if (found == held_until_.end()) return false;
    if (frame <= found->second) return true;
    held_until_.erase(found);
    return false;
}

void RecentDemand::fits(bool fits_now, FrameId frame, std::size_t free_pages) {
    const bool budget_grew = free_pages > free_while_held_;
    free_while_held_ = std::min(free_while_held_, free_pages);
    if (!fits_now) {
        fitting_since_.reset();
        return;
    }
    if (!fitting_since_) fitting_since_ = frame;
    if (budget_grew || frame - *fitting_since_ + 1 >= window_) release_holds();
}

void RecentDemand::release_holds() noexcept {
    held_until_.clear();
    fitting_since_.reset();
}

std::size_t RecentDemand::pages(FrameId frame) {
    forget_before(frame);
    return last_asked_.size();
}

// Drops the asks that left the window ending with `frame`, and the evictions older than
// refault_frames; an entry renewed since stays.
void RecentDemand::forget_before(FrameId frame) {
    const FrameId first_asked = first_kept_frame(frame, window_);
    while (!asks_.empty() && asks_.front().first < first_asked) {
        auto found = last_asked_.find(asks_.front().second);
        if (found != last_asked_.end() && found->second < first_asked) last_asked_.erase(found);
        asks_.pop_front();
    }
    const FrameId first_evicted = first_kept_frame(frame, refault_frames);
    while (!evictions_.empty() && evictions_.front().first < first_evicted) {
        auto found = evicted_in_.find(evictions_.front().second);
        if (found != evicted_in_.end() && found->second < first_evicted) evicted_in_.erase(found);
        evictions_.pop_front();
    }
}

}  // namespace vtpage::vt::streamer_detail
