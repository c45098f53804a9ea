#include <unordered_map>
#include <unordered_set>

#include "vtpage/core/eviction_policy.hpp"

namespace vtpage {

namespace {

class ClockPolicy final : public EvictionPolicy {
public:
    std::string_view name() const noexcept override { return "clock"; }

    void inserted(PageIndex page) override {
        if (auto found = slot_of_.find(page); found != slot_of_.end()) {
            slots_[found->second].referenced = true;
            return;
        }
        std::size_t slot;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            slot = slots_.size();
            slots_.push_back({});
        }
        // A new page starts unreferenced: it must be used again to earn its second chance.
        slots_[slot] = Slot{page, false, true};
        slot_of_[page] = slot;
    }
    void accessed(PageIndex page) override {
        if (auto found = slot_of_.find(page); found != slot_of_.end()) {
            slots_[found->second].referenced = true;
        }
    }
    void removed(PageIndex page) override {
        auto found = slot_of_.find(page);
        if (found == slot_of_.end()) return;
        slots_[found->second].occupied = false;
        free_.push_back(found->second);
        slot_of_.erase(found);
    }
    std::vector<PageIndex> choose_victims(
        std::size_t count, const std::function<bool(PageIndex)>& evictable) override {
        std::vector<PageIndex> victims;
        if (slots_.empty()) return victims;
        std::unordered_set<PageIndex> chosen;
        // Two sweeps clear every reference bit once and then find every evictable page.
        for (std::size_t step = 0; step < 2 * slots_.size() && victims.size() < count; ++step) {
            Slot& slot = slots_[hand_];
            hand_ = (hand_ + 1) % slots_.size();
            if (!slot.occupied || chosen.count(slot.page)) continue;
            if (slot.referenced) {
                slot.referenced = false;
                continue;
            }
            if (evictable(slot.page)) {
                victims.push_back(slot.page);
                chosen.insert(slot.page);
            }
        }
        return victims;
    }

private:
    struct Slot {
        PageIndex page = 0;
        bool referenced = false;
        bool occupied = false;
    };
    std::vector<Slot> slots_;
    std::vector<std::size_t> free_;
    std::unordered_map<PageIndex, std::size_t> slot_of_;
    std::size_t hand_ = 0;
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_clock_policy() { return std::make_unique<ClockPolicy>(); }

}  // namespace vtpage
