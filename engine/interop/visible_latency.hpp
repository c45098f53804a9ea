// Request-to-visible latency for VirtualTextureStreaming: a RequestLatencyTracker fed from the
// three threads that see a page's life. The feedback thread (or the caller's, without one) says
// which requested pages are not visible yet and which withdrawn ones were dropped; the render
// thread says which pages a completed frame made visible; the streamer's workers say which were
// evicted. The last two only queue their news under a short lock (events_mutex_), applied in
// order where feedback is processed, so that neither waits for the tracker.
#pragma once

#include <mutex>
#include <span>
#include <vector>

#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/streaming/feedback/request_latency_tracker.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage {

class VisibleLatency {
public:
    using Clock = vt::RequestLatencyTracker::Clock;

    explicit VisibleLatency(vt::RequestLatencySettings settings) : tracker_(settings) {}

    // Where feedback is processed: the requested pages the table does not show yet start their
    // wait (a page ready in the streamer may still be held back for its fill or the limit).
    void note_requested(FrameId frame, std::span<const vt::PageRequest> requests,
                        const VulkanIndirectionTable& indirection);
    // Where feedback is processed: withdrawn pages neither queued nor ready end their wait.
    // Asked queued first, then ready, so that a fill ending in between is not a cancellation.
    void note_withdrawn(std::span<const PageIndex> pages, const vt::Streamer& streamer);
    // Any thread (render thread, workers): queued until the next apply_events().
    void queue_visible(FrameId frame, std::vector<PageIndex> pages, Clock::time_point at);
    void queue_evicted(std::span<const vt::StreamedPage> pages);
    // Applies the queued events in order: where feedback is processed, or while it is idle.
    void apply_events();

    vt::RequestLatencyStatistics statistics() const { return tracker_.statistics(); }

private:
    struct Event {
        bool visible = false;  // else evicted
        FrameId frame = 0;
        Clock::time_point time;
        std::vector<PageIndex> pages;
    };
    void queue(Event event);

    vt::RequestLatencyTracker tracker_;  // thread-safe itself
    std::mutex events_mutex_;            // guards events_
    std::vector<Event> events_;
    // Scratch of the thread that processes feedback (one at a time).
    std::vector<PageIndex> not_visible_, cancelled_;
};

}  // namespace vtpage
