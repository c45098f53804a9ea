// Which resident page to evict when the budget is full. The page table tells the policy what
// happens to pages and asks it for victims; the policy never sees pinned or fenced pages as
// candidates because the table's predicate rules them out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace vtpage {

using PageIndex = std::uint64_t;

class EvictionPolicy {
public:
    virtual ~EvictionPolicy() = default;
    virtual std::string_view name() const noexcept = 0;
    virtual void inserted(PageIndex page) = 0;  // became resident
    virtual void accessed(PageIndex page) = 0;  // requested while resident
    virtual void removed(PageIndex page) = 0;   // chosen as a victim or evicted explicitly
    // Up to count distinct victims, best victim first, among pages for which evictable(page)
    // holds. Does not remove them: the table calls removed() for each one it takes.
    virtual std::vector<PageIndex> choose_victims(
        std::size_t count, const std::function<bool(PageIndex)>& evictable) = 0;
};

// Least recently used.
std::unique_ptr<EvictionPolicy> make_lru_policy();
// CLOCK (second chance): a reference bit per page and a sweeping hand; cheaper accesses than
// LRU, close to it in choices.
std::unique_ptr<EvictionPolicy> make_clock_policy();
// "lru" or "clock"; invalid_argument otherwise.
std::unique_ptr<EvictionPolicy> make_eviction_policy(std::string_view name);

}  // namespace vtpage
