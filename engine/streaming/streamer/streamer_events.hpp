// The streamer's events on their way to the app: the callbacks of StreamerSettings, called one
// at a time in the order of the changes they report (OrderedDelivery), with no lock of the
// streamer held, and the queue poll_events() empties.
//
// A part takes a ticket where it makes a change (under its own lock, so that tickets follow the
// changes) and emits right after, before it waits for anything else.
#pragma once

#include <atomic>
#include <span>
#include <vector>

#include "base/ordered_delivery.hpp"
#include "base/ranked_mutex.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

class StreamerEvents {
public:
    using Ticket = detail::OrderedDelivery::Ticket;

    explicit StreamerEvents(const StreamerSettings& settings) : settings_(settings) {}

    Ticket take() { return delivery_.take(); }
    // Delivers the event in its ticket's turn; an empty one, or one after stop(), only passes
    // the turn.
    void emit(Ticket& ticket, StreamerEventKind kind, std::span<const StreamedPage> pages);
    // From now on changes are not reported (destruction): accepting() turns false at once, and
    // this returns once every event taken so far was delivered.
    void stop();
    bool accepting() const noexcept { return accepting_; }
    std::vector<StreamerEvent> poll();

private:
    const StreamerSettings& settings_;
    detail::OrderedDelivery delivery_{"streamer events"};
    bool delivering_ = true;  // read and written in the delivery's turn
    std::atomic<bool> accepting_{true};
    detail::RankedMutex queue_mutex_{detail::LockRank::streamer_event_queue,
                                     "streamer event queue"};
    std::vector<StreamerEvent> queue_;  // guarded by queue_mutex_
};

}  // namespace vtpage::vt::streamer_detail
