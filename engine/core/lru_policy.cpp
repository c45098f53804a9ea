#include <list>
#include <unordered_map>

#include "vtpage/core/eviction_policy.hpp"

namespace vtpage {

namespace {

class LruPolicy final : public EvictionPolicy {
public:
    std::string_view name() const noexcept override { return "lru"; }

    void inserted(PageIndex page) override {
        if (positions_.count(page)) return accessed(page);
        order_.push_back(page);
        positions_[page] = std::prev(order_.end());
    }
    void accessed(PageIndex page) override {
        auto found = positions_.find(page);
        if (found == positions_.end()) return;
        order_.splice(order_.end(), order_, found->second);  // most recent at the back
    }
    void removed(PageIndex page) override {
        auto found = positions_.find(page);
        if (found == positions_.end()) return;
        order_.erase(found->second);
        positions_.erase(found);
    }
    std::vector<PageIndex> choose_victims(
        std::size_t count, const std::function<bool(PageIndex)>& evictable) override {
        std::vector<PageIndex> victims;
        for (auto it = order_.begin(); it != order_.end() && victims.size() < count; ++it) {
            if (evictable(*it)) victims.push_back(*it);
        }
        return victims;
    }

private:
    std::list<PageIndex> order_;  // least recently used first
    std::unordered_map<PageIndex, std::list<PageIndex>::iterator> positions_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_lru_policy() { return std::make_unique<LruPolicy>(); }

}  // namespace vtpage
