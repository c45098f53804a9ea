#include "streaming/streamer/request_book.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

namespace {
constexpr auto stall_retry = std::chrono::milliseconds(2);
constexpr auto async_poll = std::chrono::microseconds(500);
constexpr auto loader_poll = std::chrono::milliseconds(2);
}  // namespace

void RequestBook::queue(const Lock&, const PendingKey& key, StreamRequestResult& result,
                        bool& queued) {
    queued = false;
    bool replaced = false;
    switch (pending_.add(key, replaced)) {
        case PendingQueue::Added::raised:
        case PendingQueue::Added::already_queued:
            ++result.already_queued;
            break;
        case PendingQueue::Added::dropped:
            ++result.dropped;
            ++stats_.dropped_requests;
            break;
        case PendingQueue::Added::queued:
            ++result.queued;
            queued = true;
            if (replaced) {
                ++result.dropped;
                ++stats_.dropped_requests;
            }
            break;
    }
}

void RequestBook::ask_again(const Lock&, PageIndex page, FrameId frame) {
    FrameId& asked = asked_in_flight_[page];
    asked = std::max(asked, frame);
}

void RequestBook::requeue(const Lock& lock, std::span<const PendingKey> keys) {
    std::vector<PendingKey> back(keys.begin(), keys.end());
    for (PendingKey& key : back) leave_flight(lock, key.page, key.asked_in);
    pending_.put_back(back);
}

void RequestBook::supersede(const Lock& lock, std::span<const PendingKey> keys) {
    for (PendingKey key : keys) {
        const FrameId asked_before = key.asked_in;
        if (leave_flight(lock, key.page, key.asked_in) && key.asked_in > asked_before) {
            pending_.put_back(std::span(&key, 1));
        } else {
            ++stats_.superseded_requests;
        }
    }
    notify_if_idle(lock);
}

bool RequestBook::leave_flight(const Lock&, PageIndex page, FrameId& asked_in) {
    in_flight_.erase(page);
    auto asked = asked_in_flight_.find(page);
    if (asked == asked_in_flight_.end()) return false;
    asked_in = std::max(asked_in, asked->second);
    asked_in_flight_.erase(asked);
    return true;
}

std::size_t RequestBook::cancel(const Lock& lock, std::span<const PageIndex> pages) {
    std::size_t cancelled = 0;
    // Only requests still pending count: ready, in-flight or unknown pages are no-ops.
    for (PageIndex page : pages) cancelled += pending_.erase(page) ? 1 : 0;
    stats_.cancelled_requests += cancelled;
    notify_if_idle(lock);
    return cancelled;
}

std::size_t RequestBook::clear_pending(const Lock& lock) {
    const std::size_t cleared = pending_.clear();
    stats_.cancelled_requests += cleared;
    notify_if_idle(lock);
    return cleared;
}

const StreamedPage* RequestBook::find_ready(const Lock&, PageIndex page) const {
    auto found = ready_.find(page);
    return found == ready_.end() ? nullptr : &found->second;
}

std::vector<StreamedPage> RequestBook::all_ready(const Lock&) const {
    std::vector<StreamedPage> pages;
    pages.reserve(ready_.size());
    for (const auto& [page, ready] : ready_) pages.push_back(ready);
    return pages;
}

void RequestBook::unready(const Lock&, PageIndex page, std::uint64_t generation) {
    auto found = ready_.find(page);
    if (found != ready_.end() && found->second.generation == generation) ready_.erase(found);
}

std::optional<StreamedPage> RequestBook::take_ready(const Lock&, PageIndex page) {
    auto found = ready_.find(page);
    if (found == ready_.end()) return std::nullopt;
    StreamedPage taken = found->second;
    ready_.erase(found);
    return taken;
}

void RequestBook::add_tail(const Lock&, PageIndex page, bool packed) {
    if (packed) {
        ++packed_tails_;
    } else {
        tails_.push_back(page);
    }
}

void RequestBook::end_report(const Lock& lock) {
    --reporting_;
    notify_if_idle(lock);
}

void RequestBook::notify_if_idle(const Lock&) {
    if (idle_nolock()) idle_cv_.notify_all();
}

StreamerStatistics RequestBook::snapshot(const Lock&) const {
    StreamerStatistics result = stats_;
    result.pending = pending_.size();
    result.in_flight = in_flight_.size();
    result.ready_pages = ready_.size();
    result.tail_pages = tails_.size();
    result.packed_tails = packed_tails_;
    return result;
}

bool RequestBook::may_retry_nolock(const WorkerStall& stall) const {
    return !stall.stalled || wake_epoch_ != stall.epoch ||
           WorkerStall::Clock::now() - stall.time >= stall_retry;
}

bool RequestBook::wait_for_work_nolock(Lock& lock, const WorkerStall& stall, bool holding_async,
                                       const std::function<std::size_t()>& room) {
    if (stopping_) return true;
    const bool may_retry = may_retry_nolock(stall);
    const bool has_room = room() > 0;
    if (!pending_.empty() && may_retry && has_room) return true;
    if (holding_async) {
        work_cv_.wait_for(lock, async_poll);
        return true;  // release finished batches, then look again
    }
    if (!pending_.empty() && !has_room) {
        // The loader's read buffers are taken: a loaded page wakes us.
        work_cv_.wait_for(lock, loader_poll);
        return false;
    }
    if (stall.stalled && !pending_.empty()) {
        work_cv_.wait_until(lock, stall.time + stall_retry);
    } else {
        work_cv_.wait(lock);
    }
    return false;
}

std::optional<std::vector<PendingKey>> RequestBook::take_batch(
    const WorkerStall& stall, bool holding_async, const std::function<std::size_t()>& room,
    std::size_t batch_pages) {
    Lock lock(mutex_);
    while (!wait_for_work_nolock(lock, stall, holding_async, room)) {}
    if (stopping_) return std::nullopt;
    std::vector<PendingKey> keys;
    const std::size_t take = std::min({batch_pages, pending_.size(), room()});
    if (take > 0 && may_retry_nolock(stall)) {
        keys = pending_.take(take);
        for (const PendingKey& key : keys) in_flight_.insert(key.page);
    }
    return keys;
}

void RequestBook::note_stall(WorkerStall& stall) {
    Lock lock(mutex_);
    stall.stalled = true;
    stall.epoch = wake_epoch_;
    stall.time = WorkerStall::Clock::now();
}

void RequestBook::wake() {
    {
        Lock lock(mutex_);
        ++wake_epoch_;
    }
    work_cv_.notify_all();
}

void RequestBook::stop() {
    {
        Lock lock(mutex_);
        stopping_ = true;
    }
    work_cv_.notify_all();
}

bool RequestBook::wait_idle(std::chrono::milliseconds timeout) {
    Lock lock(mutex_);
    return idle_cv_.wait_for(lock, timeout, [&] { return idle_nolock(); });
}

std::uint64_t RequestBook::finished_pages() {
    Lock lock(mutex_);
    return stats_.pages_filled + stats_.failed_pages;
}

}  // namespace vtpage::vt::streamer_detail
