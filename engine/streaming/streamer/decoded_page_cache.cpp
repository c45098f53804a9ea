#include "streaming/streamer/decoded_page_cache.hpp"

namespace vtpage::vt::streamer_detail {

DecodedPageCache::Found DecodedPageCache::find(const TileSource* source, std::uint64_t page) {
    const Key key{source, page};
    std::lock_guard lock(mutex_);
    const auto found = index_.find(key);
    if (found == index_.end()) return {.on_its_way = on_its_way_.contains(key)};
    recent_.splice(recent_.begin(), recent_, found->second);
    ++hits_;
    return {.bytes = found->second->bytes};
}

bool DecodedPageCache::begin_keep(const TileSource* source, std::uint64_t page) {
    if (capacity_ == 0) return false;
    const Key key{source, page};
    std::lock_guard lock(mutex_);
    if (index_.contains(key)) return false;
    return on_its_way_.insert(key).second;
}

void DecodedPageCache::abandon_keep(const TileSource* source, std::uint64_t page) {
    std::lock_guard lock(mutex_);
    on_its_way_.erase({source, page});
}

void DecodedPageCache::keep(std::shared_ptr<const TileSource> source, std::uint64_t page,
                            Page bytes) {
    if (capacity_ == 0 || !source || !bytes) return;
    const Key key{source.get(), page};
    std::lock_guard lock(mutex_);
    on_its_way_.erase(key);
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
