// Streaming under pressure: decides, once per frame, the memory budget, how many pages a frame
// may make visible and the level-of-detail bias, from the frame time and the device's free
// memory. It only decides (no threads, no device calls): the caller measures and applies
// (Streamer::set_budget and evict_over_budget, VulkanIndirectionTable::set_publish_limit, the
// renderer's bias), so that the logic runs and is tested anywhere.
//
// Memory: the device keeps headroom_bytes free for other processes. When free memory falls
// below that (another process allocating), the budget drops at once to what vtpage holds minus
// the shortfall (never below min_budget_bytes), and the caller evicts at most step_pages a frame
// until vtpage holds no more than the budget: pages given back, frames never stalled. The budget
// grows back a step at a time once free memory has stayed a step above the headroom for
// grow_after_frames frames and the budget is in use, up to max_budget_bytes.
//
// Frame time (frame_ms_target > 0): a frame over the target halves the pages a frame may make
// visible (down to min_pages_per_frame), and at that floor raises the bias by lod_bias_step
// (up to max_lod_bias: coarser levels, fewer pages wanted); calm_frames frames under 80% of the
// target in a row undo one step, the bias first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vtpage::vt {

struct StreamingGovernorSettings {
    double frame_ms_target = 0;  // 0: no frame-time control (no limit, no bias)
    std::size_t page_bytes = std::size_t(2) << 20;
    std::size_t max_budget_bytes = std::size_t(1) << 30;  // the app's budget
    std::size_t min_budget_bytes = std::size_t(64) << 20;
    std::size_t headroom_bytes = std::size_t(512) << 20;  // 0: no memory control
    std::size_t step_pages = 32;                          // evicted per frame; grown per step
    std::uint32_t grow_after_frames = 30;
    std::size_t min_pages_per_frame = 8;
    std::size_t max_pages_per_frame = 512;
    float max_lod_bias = 2.0f;
    float lod_bias_step = 0.25f;
    std::uint32_t calm_frames = 30;
};

// What one frame brings: its time, the device's free memory and what vtpage holds there (the
// page pool's reserved bytes: resident, held back and idle pages).
struct GovernorInput {
    double frame_ms = 0;  // not finite or negative: no frame-time measurement this time
    std::size_t device_free_bytes = 0;
    std::size_t held_bytes = 0;
};

struct GovernorDecision {
    std::size_t budget_bytes = 0;
    std::size_t evict_pages = 0;    // pages to give back now (0 when within the budget)
    std::size_t publish_limit = 0;  // pages a frame may make visible; 0: no limit
    float lod_bias = 0;
    friend bool operator==(const GovernorDecision&, const GovernorDecision&) = default;
};

struct StreamingGovernorStatistics {
    std::uint64_t frames = 0;
    std::uint64_t frames_over_target = 0;
    std::uint64_t shrinks = 0;  // times the budget was lowered for memory
    std::uint64_t grows = 0;    // steps it grew back
    std::size_t lowest_budget_bytes = 0;
    std::size_t lowest_publish_limit = 0;
    float highest_lod_bias = 0;
};

class StreamingGovernor {
public:
    // invalid_argument for a target that is negative, not finite or above a minute, a budget
    // range that is empty or not whole pages, zero steps, or a bias range that is not finite.
    explicit StreamingGovernor(StreamingGovernorSettings settings);

    GovernorDecision update(const GovernorInput& input);
    const GovernorDecision& current() const noexcept { return decision_; }
    const StreamingGovernorSettings& settings() const noexcept { return settings_; }
    const StreamingGovernorStatistics& statistics() const noexcept { return statistics_; }

private:
    void follow_memory(const GovernorInput& input);
    void follow_frame_time(double frame_ms);

    StreamingGovernorSettings settings_;
    GovernorDecision decision_;
    StreamingGovernorStatistics statistics_;
    std::uint32_t roomy_frames_ = 0;  // in a row with free memory a step above the headroom
    std::uint32_t calm_frames_ = 0;   // in a row under 80% of the target
};

}  // namespace vtpage::vt
