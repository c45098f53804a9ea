#include "streaming/streamer/streamer_events.hpp"

#include <mutex>

#include "base/test_points.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt::streamer_detail {

void StreamerEvents::emit(Ticket& ticket, StreamerEventKind kind,
                          std::span<const StreamedPage> pages) {
    VTPAGE_TEST_POINT("streamer.emit");
    if (pages.empty()) return ticket.pass();
    delivery_.deliver(ticket, [&] {
        if (!delivering_) return;
        VTPAGE_TRACE_SCOPE("streamer", "deliver events", .count = pages.size());
        if (TraceRecorder* trace = trace::active(); trace && kind != StreamerEventKind::committed) {
            // In delivery order: a page is ready (or gone) for the app from here on.
            const char* name = kind == StreamerEventKind::ready ? "ready" : "evicted";
            for (const StreamedPage& page : pages)
                trace->instant("page", name, {.page = page.page});
        }
        const StreamedPagesCallback& callback =
            kind == StreamerEventKind::committed ? settings_.on_committed
            : kind == StreamerEventKind::ready   ? settings_.on_ready
                                                 : settings_.on_evicted;
        if (callback) {
            VTPAGE_TEST_POINT("streamer.callback.before");
            try {
                callback(pages);
            } catch (const std::exception& error) {
                settings_.log.error("streamer: an event callback threw: ", error.what());
            }
            VTPAGE_TEST_POINT("streamer.callback.after");
        }
        if (settings_.queue_events) {
            std::lock_guard lock(queue_mutex_);
            for (const StreamedPage& page : pages) queue_.push_back({kind, page});
        }
    });
}

void StreamerEvents::stop() {
    accepting_ = false;
    Ticket last = delivery_.take();
    delivery_.deliver(last, [&] { delivering_ = false; });
}

std::vector<StreamerEvent> StreamerEvents::poll() {
    std::lock_guard lock(queue_mutex_);
    std::vector<StreamerEvent> events;
    events.swap(queue_);
    return events;
}

}  // namespace vtpage::vt::streamer_detail
