// What a run's frames say of the view against the budget (vt::BudgetDemand, after each
// feedback's requests): the newest for the HUD, and for the report how many frames were over
// budget, by how much at most, and how much of the budget held pages the view samples while it
// was (the residency samples taken over budget).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "vtpage/streaming/feedback/residency_efficiency.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::viewer {

struct BudgetTotals {
    vt::BudgetDemand newest;
    std::uint64_t frames = 0;
    std::uint64_t over_budget_frames = 0;
    std::size_t most_over_budget_pages = 0;
    // Residency samples taken while over budget: the share of the budget's free pages that
    // held pages the view sampled (in use), summed.
    std::uint64_t over_budget_samples = 0;
    double sampled_budget_share_sum = 0;

    void add_frame(const vt::BudgetDemand& demand) {
        newest = demand;
        ++frames;
        if (!demand.over_budget()) return;
        ++over_budget_frames;
        most_over_budget_pages = std::max(most_over_budget_pages, demand.over_budget_pages);
    }
    // A residency sample measured with the newest frame's demand.
    void add_residency(const vt::ResidencySample& sample, std::uint64_t page_bytes) {
        if (!newest.over_budget() || newest.free_pages == 0) return;
        ++over_budget_samples;
        const double free_bytes = double(newest.free_pages) * double(page_bytes);
        sampled_budget_share_sum += std::min(1.0, double(sample.in_use_bytes) / free_bytes);
    }
    double mean_sampled_budget_share() const {
        return over_budget_samples ? sampled_budget_share_sum / double(over_budget_samples) : 0;
    }
};

}  // namespace vtpage::viewer
