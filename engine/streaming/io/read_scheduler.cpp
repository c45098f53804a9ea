#include "streaming/io/read_scheduler.hpp"

#include <algorithm>
#include <utility>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

ReadScheduler::ReadScheduler(std::size_t depth, std::size_t max_queued)
    : depth_(depth), max_queued_(max_queued) {}

ReadTicket ReadScheduler::submit(const ReadRequest& request) {
    ReadTicket ticket;
    {
        std::lock_guard lock(mutex_);
        if (waiting_.size() >= max_queued_) {
            throw Error(Errc::busy, "FileReadQueue::submit",
                        "the queue is full: take completions before submitting more",
                        detail::concat("max_queued=", max_queued_, " in_flight=", issued_.size(),
                                       " fd=", request.fd, " offset=", request.offset));
        }
        ticket = enqueue_nolock(request);
    }
    issuable_.notify_one();
    wake();
    return ticket;
}

ReadTicket ReadScheduler::submit_failed(const ReadRequest& request, int error,
                                        std::string message) {
    std::lock_guard lock(mutex_);
    const ReadTicket ticket{next_ticket_++};
    ++statistics_.submitted;
    ++statistics_.failed;
    complete_nolock(ReadCompletion{.tag = request.tag,
                                   .ticket = ticket,
                                   .status = ReadStatus::failed,
                                   .error = error,
                                   .message = std::move(message)});
    return ticket;
}

ReadTicket ReadScheduler::enqueue_nolock(const ReadRequest& request) {
    const ReadTicket ticket{next_ticket_++};
    waiting_.push_back(Waiting{ticket, request});
    ++statistics_.submitted;
    statistics_.queued_peak = std::max(statistics_.queued_peak, waiting_.size());
    return ticket;
}

bool ReadScheduler::cancel(ReadTicket ticket) {
    std::lock_guard lock(mutex_);
    const auto found = std::find_if(waiting_.begin(), waiting_.end(),
                                    [&](const Waiting& w) { return w.ticket == ticket; });
    if (found == waiting_.end()) {
        // Issued: the read goes on, its completion says that it is no longer wanted.
        if (issued_.contains(ticket.id)) cancel_requested_.insert(ticket.id);
        return false;
    }
    ++statistics_.cancelled;
    complete_nolock(ReadCompletion{
        .tag = found->request.tag, .ticket = ticket, .status = ReadStatus::cancelled});
    waiting_.erase(found);
    return true;
}

std::vector<ReadCompletion> ReadScheduler::take(std::size_t min_completions,
                                                std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    done_.wait_for(lock, timeout, [&] {
        return completions_.size() >= min_completions || (waiting_.empty() && issued_.empty());
    });
    return std::exchange(completions_, {});
}

FileReadStatistics ReadScheduler::statistics() const {
    std::lock_guard lock(mutex_);
    FileReadStatistics statistics = statistics_;
    statistics.in_flight_now = issued_.size();
    statistics.queued_now = waiting_.size();
    return statistics;
}

std::optional<IssuedRead> ReadScheduler::next(bool wait) {
    std::unique_lock lock(mutex_);
    const auto issuable = [&] { return !waiting_.empty() && issued_.size() < depth_; };
    if (wait) issuable_.wait(lock, [&] { return stopping_ || issuable(); });
    if (stopping_ || !issuable()) return std::nullopt;
    IssuedRead read;
    read.ticket = waiting_.front().ticket;
    read.request = waiting_.front().request;
    waiting_.pop_front();
    issued_.insert(read.ticket.id);
    ++statistics_.issued;
    statistics_.max_in_flight = std::max(statistics_.max_in_flight, issued_.size());
    return read;
}

void ReadScheduler::finish(IssuedRead&& read) {
    {
        std::lock_guard lock(mutex_);
        issued_.erase(read.ticket.id);
        count_nolock(read);
        complete_nolock(
            ReadCompletion{.tag = read.request.tag,
                           .ticket = read.ticket,
                           .status = read.status,
                           .bytes = read.done,
                           .error = read.error,
                           .message = std::move(read.message),
                           .cancel_requested = cancel_requested_.erase(read.ticket.id) > 0});
    }
    issuable_.notify_one();
}

void ReadScheduler::count_nolock(const IssuedRead& read) {
    if (read.status == ReadStatus::ok) {
        ++statistics_.completed_ok;
    } else {
        ++statistics_.failed;
    }
    statistics_.bytes_read += read.done;
    statistics_.retries += read.retries;
    statistics_.continued += read.continued;
    statistics_.page_cache_attempts += read.page_cache_attempts;
}

void ReadScheduler::complete_nolock(ReadCompletion completion) {
    // After stop() nobody takes completions: the destructor is running.
    if (!stopping_) completions_.push_back(std::move(completion));
    done_.notify_all();
}

void ReadScheduler::set_wake(std::function<void()> wake) {
    std::lock_guard lock(mutex_);
    wake_ = std::move(wake);
}

void ReadScheduler::wake() {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        wake = wake_;
    }
    if (wake) wake();
}

bool ReadScheduler::stopping() const {
    std::lock_guard lock(mutex_);
    return stopping_;
}

void ReadScheduler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        statistics_.cancelled += waiting_.size();
        waiting_.clear();
        completions_.clear();
    }
    issuable_.notify_all();
    done_.notify_all();
    wake();
}

bool ReadScheduler::wait_idle(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return done_.wait_until(lock, deadline, [&] { return issued_.empty(); });
}

}  // namespace vtpage::vt
