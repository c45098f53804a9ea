#include "stamp_book.hpp"

#include <algorithm>

namespace vtpage::stress {

StampBook::StampBook(std::size_t shards) {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, shards); ++i) {
        shards_.push_back(std::make_unique<Shard>());
    }
}

std::size_t StampBook::shard_of(PageIndex page) const noexcept {
    // Neighbouring pages (scan, thrash) land in different shards.
    return static_cast<std::size_t>((page * 0x9e3779b97f4a7c15ull) >> 32) % shards_.size();
}

StampBook::Hold::Hold(StampBook& book, std::span<const PageIndex> pages) : book_(book) {
    for (PageIndex page : pages) shards_.push_back(book.shard_of(page));
    std::sort(shards_.begin(), shards_.end());
    shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
    for (std::size_t shard : shards_) book_.shards_[shard]->mutex.lock();
}

StampBook::Hold::~Hold() {
    for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) {
        book_.shards_[*it]->mutex.unlock();
    }
}

const StampBook::Entry* StampBook::Hold::find(PageIndex page) const {
    const Shard& shard = *book_.shards_[book_.shard_of(page)];
    auto found = shard.entries.find(page);
    return found == shard.entries.end() ? nullptr : &found->second;
}

void StampBook::Hold::set(PageIndex page, Entry entry) {
    book_.shards_[book_.shard_of(page)]->entries[page] = entry;
}

std::size_t StampBook::size() const {
    std::size_t total = 0;
    for (const auto& shard : shards_) {
        std::lock_guard lock(shard->mutex);
        total += shard->entries.size();
    }
    return total;
}

}  // namespace vtpage::stress
