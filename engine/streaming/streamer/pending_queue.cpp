#include "streaming/streamer/pending_queue.hpp"

#include <algorithm>
#include <iterator>

namespace vtpage::vt::streamer_detail {

void PendingQueue::insert(const PendingKey& key) {
    keys_.insert(key);
    index_[key.page] = key;
}

bool PendingQueue::erase(PageIndex page) {
    auto found = index_.find(page);
    if (found == index_.end()) return false;
    keys_.erase(found->second);
    index_.erase(found);
    return true;
}

PendingQueue::Added PendingQueue::add(PendingKey key, bool& replaced) {
    replaced = false;
    if (auto found = index_.find(key.page); found != index_.end()) {
        PendingKey again = found->second;
        const bool raise = key.count > again.count;
        if (!raise && key.asked_in <= again.asked_in) return Added::already_queued;
        again.count = std::max(again.count, key.count);
        again.asked_in = std::max(again.asked_in, key.asked_in);
        erase(key.page);
        insert(again);
        return raise ? Added::raised : Added::already_queued;
    }
    key.sequence = sequence_++;
    if (keys_.size() >= bound_) {
        const PendingKey worst = *std::prev(keys_.end());
        if (!(key < worst)) return Added::dropped;
        erase(worst.page);
        replaced = true;
    }
    insert(key);
    return Added::queued;
}

void PendingQueue::put_back(std::span<const PendingKey> keys) {
    for (const PendingKey& key : keys) {
        if (!contains(key.page)) insert(key);
    }
}

void PendingQueue::requeue(PendingKey key) {
    key.sequence = sequence_++;
    insert(key);
}

std::vector<PendingKey> PendingQueue::take(std::size_t count) {
    std::vector<PendingKey> taken;
    for (auto it = keys_.begin(); it != keys_.end() && taken.size() < count;) {
        taken.push_back(*it);
        index_.erase(it->page);
        it = keys_.erase(it);
    }
    return taken;
}

std::size_t PendingQueue::clear() {
    const std::size_t waiting = keys_.size();
    keys_.clear();
    index_.clear();
    return waiting;
}

}  // namespace vtpage::vt::streamer_detail
