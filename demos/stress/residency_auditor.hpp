// Listens to the page table's callbacks and checks the story they tell: a page is committed
// only when it is not resident and evicted only when it is, with the physical page it was
// committed with; no physical page backs two virtual pages at once; generations only grow. At
// the end, the table's own view must be the callbacks' view. Any disagreement is a page lost
// or duplicated.
#pragma once

#include <mutex>
#include <unordered_map>

#include "run_stats.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::stress {

class ResidencyAuditor {
public:
    explicit ResidencyAuditor(RunStats& stats) : stats_(stats) {}
    void attach(PageTableSettings& settings);
    // Compares the callbacks' resident pages with the table's, page by page.
    void check_against(const PageTable& table);
    std::size_t resident_count() const;
    // The pages the callbacks say are resident, with their mappings.
    std::vector<PageMapping> resident() const;

private:
    void committed(std::span<const PageMapping> mappings);
    void evicted(std::span<const PageMapping> mappings);

    RunStats& stats_;
    mutable std::mutex mutex_;
    std::unordered_map<PageIndex, PageMapping> resident_;
    std::unordered_map<std::uint32_t, PageIndex> owner_of_slot_;
    std::uint64_t last_generation_ = 0;
};

}  // namespace vtpage::stress
