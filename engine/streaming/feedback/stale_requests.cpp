#include "streaming/feedback/stale_requests.hpp"

#include <utility>

namespace vtpage::vt {

std::span<const PageIndex> StaleRequests::withdraw(const FeedbackResult& processed,
                                                   Streamer& streamer, bool cancel) {
    std::unordered_set<PageIndex>& requested = requested_next_;
    requested.clear();
    for (const PageRequest& request : processed.requests) requested.insert(request.page);
    withdrawn_.clear();
    if (cancel) {
        for (PageIndex page : requested_) {
            if (!requested.count(page)) withdrawn_.push_back(page);
        }
        if (!withdrawn_.empty()) streamer.cancel(withdrawn_);
    }
    std::swap(requested_, requested_next_);
    return withdrawn_;
}

}  // namespace vtpage::vt
