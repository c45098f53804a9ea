#include "residency_auditor.hpp"

namespace vtpage::stress {

void ResidencyAuditor::attach(PageTableSettings& settings) {
    settings.on_committed = [this](std::span<const PageMapping> m) { committed(m); };
    settings.on_evicted = [this](std::span<const PageMapping> m) { evicted(m); };
}

void ResidencyAuditor::committed(std::span<const PageMapping> mappings) {
    std::lock_guard lock(mutex_);
    for (const PageMapping& m : mappings) {
        if (resident_.count(m.page)) {
            stats_.integrity_error(detail::concat("page ", m.page, " committed twice"));
        }
        auto owner = owner_of_slot_.find(m.physical.slot);
        if (owner != owner_of_slot_.end()) {
            stats_.integrity_error(detail::concat("physical slot ", m.physical.slot,
                                                  " backs pages ", owner->second, " and ", m.page));
        }
        // Callbacks come in the order of the changes, and each commit takes the next
        // generation: they only grow.
        if (m.generation <= last_generation_) {
            stats_.integrity_error(detail::concat("page ", m.page, " committed with generation ",
                                                  m.generation, " after ", last_generation_));
        }
        last_generation_ = std::max(last_generation_, m.generation);
        resident_[m.page] = m;
        owner_of_slot_[m.physical.slot] = m.page;
    }
}

void ResidencyAuditor::evicted(std::span<const PageMapping> mappings) {
    std::lock_guard lock(mutex_);
    for (const PageMapping& m : mappings) {
        auto found = resident_.find(m.page);
        if (found == resident_.end() || found->second.generation != m.generation ||
            !(found->second.physical == m.physical)) {
            stats_.integrity_error(detail::concat("page ", m.page, " evicted (generation ",
                                                  m.generation, ") but not resident as committed"));
            continue;
        }
        owner_of_slot_.erase(m.physical.slot);
        resident_.erase(found);
    }
}

void ResidencyAuditor::check_against(const PageTable& table) {
    std::lock_guard lock(mutex_);
    for (const auto& [page, mapping] : resident_) {
        auto now = table.lookup(page);
        if (!now) {
            stats_.integrity_error(
                detail::concat("page ", page, " is resident by the callbacks, not the table"));
        } else if (now->generation != mapping.generation || !(now->physical == mapping.physical)) {
            stats_.integrity_error(
                detail::concat("page ", page, " differs between the table and the callbacks"));
        }
    }
    if (table.resident_count() != resident_.size()) {
        stats_.integrity_error(detail::concat("the table holds ", table.resident_count(),
                                              " resident pages, the callbacks ", resident_.size()));
    }
}

std::size_t ResidencyAuditor::resident_count() const {
    std::lock_guard lock(mutex_);
    return resident_.size();
}

std::vector<PageMapping> ResidencyAuditor::resident() const {
    std::lock_guard lock(mutex_);
    std::vector<PageMapping> pages;
    pages.reserve(resident_.size());
    for (const auto& [page, mapping] : resident_) pages.push_back(mapping);
    return pages;
}

}  // namespace vtpage::stress
