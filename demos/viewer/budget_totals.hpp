// What a run's frames say of the view against the budget (vt::BudgetDemand, after each
// feedback's requests): the newest for the HUD, and for the report how many frames were over
// budget, by how much at most, and how much of the budget's free pages held pages the view
// asked for (its pages and their coarser fallbacks) while it was.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::viewer {

struct BudgetTotals {
    vt::BudgetDemand newest;
    std::uint64_t frames = 0;
    std::uint64_t over_budget_frames = 0;
    std::size_t most_over_budget_pages = 0;
    // Over the frames over budget: the share of the free pages holding pages the view asked
    // for, summed.
    double sampled_budget_share_sum = 0;

    void add_frame(const vt::BudgetDemand& demand) {
        newest = demand;
        ++frames;
        if (!demand.over_budget()) return;
        ++over_budget_frames;
        most_over_budget_pages = std::max(most_over_budget_pages, demand.over_budget_pages);
        sampled_budget_share_sum += demand.sampled_share();
    }
    double mean_sampled_budget_share() const {
        return over_budget_frames ? sampled_budget_share_sum / double(over_budget_frames) : 0;
    }
};

}  // namespace vtpage::viewer
