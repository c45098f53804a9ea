#include "staging_ring.hpp"

namespace vtpage::bench::disk {

StagingRing::StagingRing(DeviceCopier& copier, std::size_t pages, std::size_t page_bytes)
    : copier_(copier),
      page_bytes_(page_bytes),
      memory_(copier.allocate_staging(pages * page_bytes)) {
    for (std::size_t i = 0; i < pages; ++i) free_.push_back(i);
}

StagingRing::Slot StagingRing::acquire() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty() || !copying_.empty(); });
    const bool was_free = !free_.empty();
    std::deque<std::size_t>& from = was_free ? free_ : copying_;
    const std::size_t index = from.front();
    from.pop_front();
    lock.unlock();
    if (!was_free) copier_.wait(index);  // its copy must be done before it is written again
    return {index, memory_.get() + index * page_bytes_};
}

void StagingRing::copying(const Slot& slot) {
    {
        const std::lock_guard lock(mutex_);
        copying_.push_back(slot.index);
    }
    changed_.notify_one();
}

}  // namespace vtpage::bench::disk
