// The streaming governor of VirtualTextureStreaming (VirtualTextureStreamingSettings::governor)
// and the per-frame publish limit. The render thread marks each frame begun (the frame time the
// governor sees is the longest gap between begins since it last looked); the thread that
// processes feedback runs govern() after each feedback: it measures, decides and applies (the
// budget, evictions and the pool trimming never run on the render thread), and publishes the
// decision for any thread to read (mutex_) and the bias for the render thread (an atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "vtpage/backend/backend.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"

namespace vtpage {

struct StreamingGovernanceSettings {
    std::optional<vt::StreamingGovernorSettings> governor;  // empty: the publish limit only
    std::size_t publish_limit = 0;                          // the app's own (0: none)
    std::function<MemoryInfo()> memory_probe;               // empty: the backend's
    std::function<void(const GovernedFrame&)> on_governed;
};

class StreamingGovernance {
public:
    using Clock = std::chrono::steady_clock;

    StreamingGovernance(StreamingGovernanceSettings settings, const Backend& backend);

    // Once the streamer exists: until the first decision, the decision read is its budget.
    void streamer_made(vt::Streamer& streamer);
    // Render thread, before each frame's upload: measures the frame time and, for the first
    // frame, applies the app's publish limit (after the textures' mip tails became ready, which
    // it thus leaves unlimited).
    void frame_begun(VulkanIndirectionTable& indirection);
    // The thread that processes feedback, after each one: the slowest frame since the last
    // call (begin to begin; -1 when none was measured). Taken once a feedback, then handed to
    // govern() and to the decode threads' governance.
    double take_frame_ms() noexcept { return slowest_frame_ms_.exchange(-1.0); }
    // The thread that processes feedback, after each one, with take_frame_ms()'s figure. The
    // governor is made at the first call, when the textures are there: its budget never goes
    // below what they pin.
    void govern(vt::Streamer& streamer, VulkanIndirectionTable& indirection, double frame_ms);

    bool governed() const noexcept { return settings_.governor.has_value(); }
    float lod_bias() const noexcept { return lod_bias_.load(std::memory_order_relaxed); }
    // The newest decision and the governor's statistics (any thread).
    vt::GovernorDecision decision() const;
    vt::StreamingGovernorStatistics statistics() const;

private:
    void make_governor(vt::Streamer& streamer);
    std::size_t combined_limit(std::size_t governed) const;

    StreamingGovernanceSettings settings_;
    const Backend& backend_;
    bool limit_applied_ = false;                       // render thread
    Clock::time_point last_begin_, first_begin_;       // render thread (first_begin_ read after)
    std::atomic<double> slowest_frame_ms_{-1.0};       // render thread -> feedback thread
    std::atomic<float> lod_bias_{0.0f};                // feedback thread -> render thread
    std::unique_ptr<vt::StreamingGovernor> governor_;  // the feedback thread's only
    mutable std::mutex mutex_;                         // guards the two below
    vt::GovernorDecision decision_;
    vt::StreamingGovernorStatistics statistics_;
};

}  // namespace vtpage
