#include "streaming/streamer/decoded_page_cache.hpp"

namespace vtpage::vt::streamer_detail {

DecodedPageCache::Page DecodedPageCache::find(const TileSource* source, std::uint64_t page) {
    std::lock_guard lock(mutex_);
    const auto found = index_.find({source, page});
    if (found == index_.end()) return nullptr;
    recent_.splice(recent_.begin(), recent_, found->second);
    ++hits_;
    return found->second->bytes;
}

void DecodedPageCache::keep(std::shared_ptr<const TileSource> source, std::uint64_t page,
                            Page bytes) {
    if (capacity_ == 0 || !source || !bytes) return;
    const Key key{source.get(), page};
    std::lock_guard lock(mutex_);
    if (const auto found = index_.find(key); found != index_.end()) {
        found->second->bytes = std::move(bytes);
        recent_.splice(recent_.begin(), recent_, found->second);
        return;
    }
    recent_.push_front({key, std::move(source), std::move(bytes)});
    index_.emplace(key, recent_.begin());
    if (recent_.size() <= capacity_) return;
    index_.erase(recent_.back().key);
    recent_.pop_back();
}

std::uint64_t DecodedPageCache::hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
}

}  // namespace vtpage::vt::streamer_detail
