#include "streamer_events.hpp"

#include <mutex>

#include "../../base/test_points.hpp"

namespace vtpage::vt::streamer_detail {

void StreamerEvents::emit(Ticket& ticket, StreamerEventKind kind,
                          std::span<const StreamedPage> pages) {
    VTPAGE_TEST_POINT("streamer.emit");
    if (pages.empty()) return ticket.pass();
    delivery_.deliver(ticket, [&] {
        if (!delivering_) return;
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
