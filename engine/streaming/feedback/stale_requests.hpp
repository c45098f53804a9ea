// Requests the view no longer makes: the pages the previous feedback asked for and the newest
// does not are cancelled in the streamer before they take a worker's time, so that it streams
// what is in view now rather than what was a second ago. Used by one thread at a time (the
// thread that processes feedback: FeedbackWorker's, or VirtualTextureStreaming's caller's); its
// tables are kept from feedback to feedback so that nothing large is allocated each frame.
#pragma once

#include <span>
#include <unordered_set>
#include <vector>

#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {

class StaleRequests {
public:
    // Remembers `processed`'s pages for the next call; with `cancel`, cancels in the streamer
    // the pages of the previous call that `processed` does not ask for, and returns them (valid
    // until the next call).
    std::span<const PageIndex> withdraw(const FeedbackResult& processed, Streamer& streamer,
                                        bool cancel);

private:
    std::unordered_set<PageIndex> requested_, requested_next_;
    std::vector<PageIndex> withdrawn_;
};

}  // namespace vtpage::vt
