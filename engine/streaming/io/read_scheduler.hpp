// The state a FileReadQueue shares with its backend's threads: the requests waiting to be
// issued, the count in flight (at most depth), the completions not yet taken and the
// statistics, under one mutex. Backends take reads with next() and hand them back, finished,
// with finish().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "streaming/io/read_attempt.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"

namespace vtpage::vt {

class ReadScheduler {
public:
    ReadScheduler(std::size_t depth, std::size_t max_queued);

    ReadTicket submit(const ReadRequest& request);
    // A request refused before it could be issued (an O_DIRECT range out of alignment):
    // counted as submitted and failed, its completion there at once.
    ReadTicket submit_failed(const ReadRequest& request, int error, std::string message);
    bool cancel(ReadTicket ticket);
    std::vector<ReadCompletion> take(std::size_t min_completions,
                                     std::chrono::milliseconds timeout);
    FileReadStatistics statistics() const;

    // A read to issue: with `wait`, waits for one (nullopt once stopping); else nullopt when
    // none may be issued now.
    std::optional<IssuedRead> next(bool wait);
    void finish(IssuedRead&& read);
    // Called, outside the lock, when a read may be issued or stopping begins (io_uring: the
    // ring's thread waits in the kernel, not on the condition variable).
    void set_wake(std::function<void()> wake);
    bool stopping() const;

    // Cancels what waits and wakes the backend's threads; submit() must not be called after.
    void stop();
    // Waits until no read is in flight; false when the deadline came first.
    bool wait_idle(std::chrono::steady_clock::time_point deadline);

private:
    struct Waiting {
        ReadTicket ticket;
        ReadRequest request;
    };
    ReadTicket enqueue_nolock(const ReadRequest& request);
    void complete_nolock(ReadCompletion completion);
    void count_nolock(const IssuedRead& read);
    void wake();

    const std::size_t depth_;
    const std::size_t max_queued_;
    mutable std::mutex mutex_;
    std::condition_variable issuable_;  // a read may be issued, or stopping
    std::condition_variable done_;      // a completion arrived, or nothing is in flight
    std::deque<Waiting> waiting_;
    std::unordered_set<std::uint64_t> issued_;            // tickets in flight
    std::unordered_set<std::uint64_t> cancel_requested_;  // ... whose cancel was asked
    std::vector<ReadCompletion> completions_;
    std::function<void()> wake_;
    std::uint64_t next_ticket_ = 1;
    bool stopping_ = false;
    FileReadStatistics statistics_;
};

}  // namespace vtpage::vt
