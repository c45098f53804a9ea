// Requests waiting for a worker, in priority order (coarse first, then how many asked, then who
// asked first), at most a bound of them: beyond it the lowest-priority request is dropped.
//
// A plain structure: the request book's lock guards it, with the pages in flight and ready
// that a request is checked against in the same critical section.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "streaming/streamer/batch_item.hpp"

namespace vtpage::vt::streamer_detail {

class PendingQueue {
public:
    explicit PendingQueue(std::size_t bound) : bound_(bound) {}

    enum class Added { queued, raised, already_queued, dropped };
    // Queues a new request (its sequence assigned here), or raises the count of the one
    // waiting and moves its asked_in to the newer frame. A full queue drops its lowest-priority
    // request: the new one, or one it beats (which is then `replaced`: a drop too).
    Added add(PendingKey key, bool& replaced);
    // Back after a batch could not take them (their priority kept), unless already waiting.
    void put_back(std::span<const PendingKey> keys);
    // Queues again a request that was taken (a new sequence: it goes after its equals).
    void requeue(PendingKey key);
    // Up to `count` requests of the highest priority, taken off the queue.
    std::vector<PendingKey> take(std::size_t count);
    bool erase(PageIndex page);  // whether it was waiting
    std::size_t clear();         // how many were waiting
    bool contains(PageIndex page) const { return index_.count(page) != 0; }
    std::size_t size() const noexcept { return keys_.size(); }
    bool empty() const noexcept { return keys_.empty(); }

private:
    void insert(const PendingKey& key);

    std::size_t bound_;
    std::uint64_t sequence_ = 0;
    std::set<PendingKey> keys_;
    std::unordered_map<PageIndex, PendingKey> index_;
};

}  // namespace vtpage::vt::streamer_detail
