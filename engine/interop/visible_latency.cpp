#include "interop/visible_latency.hpp"

namespace vtpage {

void VisibleLatency::note_requested(FrameId frame, std::span<const vt::PageRequest> requests,
                                    const VulkanIndirectionTable& indirection) {
    apply_events();
    not_visible_.clear();
    for (const vt::PageRequest& request : requests) {
        if (!indirection.slot_of(request.page)) not_visible_.push_back(request.page);
    }
    tracker_.note_requested(frame, not_visible_);
}

void VisibleLatency::note_withdrawn(std::span<const PageIndex> pages,
                                    const vt::Streamer& streamer) {
    apply_events();
    cancelled_.clear();
    for (PageIndex page : pages) {
        if (!streamer.is_queued(page) && !streamer.is_ready(page)) cancelled_.push_back(page);
    }
    tracker_.note_dropped(cancelled_);
}

void VisibleLatency::queue_visible(FrameId frame, std::vector<PageIndex> pages,
                                   Clock::time_point at) {
    if (pages.empty()) return;
    queue({.visible = true, .frame = frame, .time = at, .pages = std::move(pages)});
}

void VisibleLatency::queue_evicted(std::span<const vt::StreamedPage> pages) {
    Event event;
    event.pages.reserve(pages.size());
    for (const vt::StreamedPage& page : pages) event.pages.push_back(page.page);
    queue(std::move(event));
}

void VisibleLatency::queue(Event event) {
    std::lock_guard lock(events_mutex_);
    events_.push_back(std::move(event));
}

void VisibleLatency::apply_events() {
    std::vector<Event> taken;
    {
        std::lock_guard lock(events_mutex_);
        taken.swap(events_);
    }
    for (const Event& event : taken) {
        if (event.visible) {
            tracker_.note_visible(event.frame, event.pages, event.time);
        } else {
            tracker_.note_dropped(event.pages);
        }
    }
}

}  // namespace vtpage
