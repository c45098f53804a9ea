#include "interop/streaming_governance.hpp"

#include <algorithm>

namespace vtpage {

StreamingGovernance::StreamingGovernance(StreamingGovernanceSettings settings,
                                         const Backend& backend)
    : settings_(std::move(settings)), backend_(backend) {}

void StreamingGovernance::streamer_made(vt::Streamer& streamer) {
    std::lock_guard lock(mutex_);
    decision_.budget_bytes =
        streamer.page_table().budget_pages() * streamer.page_table().page_size();
}

void StreamingGovernance::frame_begun(VulkanIndirectionTable& indirection) {
    const auto now = Clock::now();
    if (!limit_applied_) {
        indirection.set_publish_limit(settings_.publish_limit);
        limit_applied_ = true;
        first_begin_ = now;
    } else {
        const double ms = std::chrono::duration<double, std::milli>(now - last_begin_).count();
        double seen = slowest_frame_ms_.load(std::memory_order_relaxed);
        while (ms > seen && !slowest_frame_ms_.compare_exchange_weak(seen, ms)) {}
    }
    last_begin_ = now;
}

void StreamingGovernance::make_governor(vt::Streamer& streamer) {
    vt::StreamingGovernorSettings governor = *settings_.governor;
    governor.page_bytes = streamer.page_table().page_size();
    governor.max_budget_bytes = streamer.page_table().budget_pages() * governor.page_bytes;
    // Never below what the textures pin: the streamer would refuse that budget.
    const std::size_t pinned =
        std::min<std::size_t>(streamer.pinned_pages().bytes(), governor.max_budget_bytes);
    governor.min_budget_bytes =
        std::clamp<std::size_t>(governor.min_budget_bytes, pinned, governor.max_budget_bytes);
    governor_ = std::make_unique<vt::StreamingGovernor>(governor);
}

// Limits on the pages a frame makes visible, 0 meaning none: the smaller of those set.
std::size_t StreamingGovernance::combined_limit(std::size_t governed) const {
    const std::size_t own = settings_.publish_limit;
    if (governed == 0 || own == 0) return std::max(governed, own);
    return std::min(governed, own);
}

void StreamingGovernance::govern(vt::Streamer& streamer, VulkanIndirectionTable& indirection,
                                 double frame_ms) {
    if (!settings_.governor) return;
    if (!governor_) make_governor(streamer);
    GovernedFrame frame;
    frame.frame_ms = frame_ms;
    const MemoryInfo memory =
        settings_.memory_probe ? settings_.memory_probe() : backend_.memory_info();
    frame.device_free_bytes = memory.free;
    frame.held_bytes = streamer.page_table().pool().statistics().reserved_bytes;
    const std::size_t budget_before = governor_->current().budget_bytes;
    const vt::GovernorDecision decision =
        governor_->update({frame.frame_ms, memory.free, frame.held_bytes});
    if (decision.budget_bytes != budget_before) streamer.set_budget(decision.budget_bytes);
    if (decision.evict_pages > 0) streamer.evict_over_budget(decision.evict_pages);
    indirection.set_publish_limit(combined_limit(decision.publish_limit));
    lod_bias_.store(decision.lod_bias, std::memory_order_relaxed);
    frame.decision = decision;
    frame.resident_pages = streamer.page_table().resident_count();
    frame.seconds = std::chrono::duration<double>(Clock::now() - first_begin_).count();
    {
        std::lock_guard lock(mutex_);
        decision_ = decision;
        statistics_ = governor_->statistics();
    }
    if (settings_.on_governed) settings_.on_governed(frame);  // no lock held
}

vt::GovernorDecision StreamingGovernance::decision() const {
    std::lock_guard lock(mutex_);
    return decision_;
}

vt::StreamingGovernorStatistics StreamingGovernance::statistics() const {
    std::lock_guard lock(mutex_);
    return statistics_;
}

}  // namespace vtpage
