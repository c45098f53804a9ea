#include "vtpage/streaming/governor/streaming_governor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {
namespace {

constexpr std::size_t mib = std::size_t(1) << 20;
constexpr std::size_t page = 2 * mib;

StreamingGovernorSettings memory_only() {
    StreamingGovernorSettings s;
    s.max_budget_bytes = 1024 * mib;
    s.min_budget_bytes = 128 * mib;
    s.headroom_bytes = 512 * mib;
    s.step_pages = 16;
    s.grow_after_frames = 5;
    return s;
}

// A device of `total` bytes where another process holds `other` and vtpage holds what it held
// after the last decision (it gives back at most evict_pages a frame, and fills its budget).
struct SimulatedDevice {
    std::size_t total = 80ull * 1024 * mib;
    std::size_t other = 0;
    std::size_t held = 1024 * mib;
    GovernorInput input() const { return {1.0, total - other - held, held}; }
    void apply(const GovernorDecision& d) {
        if (held > d.budget_bytes) {
            held -= std::min(held - d.budget_bytes, d.evict_pages * page);
        } else {
            held = std::min(d.budget_bytes, held + 16 * page);  // commits fill it again
        }
    }
};

TEST(StreamingGovernorTest, GivesMemoryBackAStepAFrameAndGrowsBackWhenItReturns) {
    StreamingGovernor governor(memory_only());
    SimulatedDevice device;
    for (int f = 0; f < 10; ++f) device.apply(governor.update(device.input()));
    EXPECT_EQ(governor.current().budget_bytes, 1024 * mib) << "plenty of memory: no change";
    EXPECT_EQ(governor.statistics().shrinks, 0u);

    // Another process takes all but 256 MiB of what is left: 256 MiB short of the headroom.
    device.other = device.total - device.held - 256 * mib;
    GovernorDecision d = governor.update(device.input());
    EXPECT_EQ(d.budget_bytes, 768 * mib);
    EXPECT_EQ(d.evict_pages, 16u) << "a step a frame, not all at once";
    int frames = 0;
    while (device.held > d.budget_bytes && frames < 100) {
        device.apply(d);
        d = governor.update(device.input());
        ++frames;
        EXPECT_LE(d.evict_pages, 16u);
    }
    EXPECT_EQ(device.held, 768 * mib);
    EXPECT_EQ(frames, 8) << "256 MiB in 16-page steps";
    EXPECT_GE(device.input().device_free_bytes, 512 * mib) << "the headroom is back";
    EXPECT_EQ(d.evict_pages, 0u);

    // The other process leaves: the budget grows back a step at a time to the app's.
    device.other = 0;
    for (int f = 0; f < 200; ++f) device.apply(governor.update(device.input()));
    EXPECT_EQ(governor.current().budget_bytes, 1024 * mib);
    EXPECT_EQ(device.held, 1024 * mib);
    EXPECT_EQ(governor.statistics().grows, 8u);  // 256 MiB in 32 MiB steps
    EXPECT_EQ(governor.statistics().lowest_budget_bytes, 768 * mib);
}

TEST(StreamingGovernorTest, NeverGoesBelowTheMinimumBudgetAndWaitsBeforeGrowing) {
    StreamingGovernor governor(memory_only());
    SimulatedDevice device;
    device.other = device.total - device.held;  // nothing free at all
    GovernorDecision d = governor.update(device.input());
    EXPECT_EQ(d.budget_bytes, 512 * mib);  // 1 GiB held, 512 MiB short
    for (int f = 0; f < 100; ++f) {
        device.apply(d);
        device.other = device.total - device.held;  // the other process takes whatever we free
        d = governor.update(device.input());
    }
    EXPECT_EQ(d.budget_bytes, 128 * mib);
    EXPECT_EQ(device.held, 128 * mib);
    // Memory returns, but only just above the headroom: no step fits above it, no growth.
    device.other = device.total - device.held - 520 * mib;
    for (int f = 0; f < 50; ++f) d = governor.update(device.input());
    EXPECT_EQ(d.budget_bytes, 128 * mib);
    // Enough for a step: it waits grow_after_frames frames first.
    device.other = device.total - device.held - 600 * mib;
    for (int f = 0; f < 4; ++f) EXPECT_EQ(governor.update(device.input()).budget_bytes, 128 * mib);
    EXPECT_EQ(governor.update(device.input()).budget_bytes, 160 * mib);
}

// A budget that is not in use does not grow: growth follows demand, not only free memory.
TEST(StreamingGovernorTest, AnUnusedBudgetDoesNotGrow) {
    StreamingGovernor governor(memory_only());
    GovernorInput input{1.0, 256 * mib, 1024 * mib};
    EXPECT_EQ(governor.update(input).budget_bytes, 768 * mib);
    input = {1.0, 40000 * mib, 100 * mib};  // memory is back, but vtpage holds little
    for (int f = 0; f < 100; ++f) EXPECT_EQ(governor.update(input).budget_bytes, 768 * mib);
    EXPECT_EQ(governor.statistics().grows, 0u);
}

TEST(StreamingGovernorTest, SlowFramesHalvePagesPerFrameThenBiasAndCalmFramesUndoIt) {
    StreamingGovernorSettings s = memory_only();
    s.headroom_bytes = 0;  // frame time only
    s.frame_ms_target = 4.0;
    s.max_pages_per_frame = 64;
    s.min_pages_per_frame = 8;
    s.calm_frames = 3;
    StreamingGovernor governor(s);
    EXPECT_EQ(governor.current().publish_limit, 64u);
    const GovernorInput slow{6.0, 0, 0};
    EXPECT_EQ(governor.update(slow).publish_limit, 32u);
    EXPECT_EQ(governor.update(slow).publish_limit, 16u);
    EXPECT_EQ(governor.update(slow).publish_limit, 8u);
    EXPECT_EQ(governor.update(slow).lod_bias, 0.25f) << "at the floor the bias rises";
    for (int f = 0; f < 20; ++f) governor.update(slow);
    EXPECT_EQ(governor.current().lod_bias, 2.0f) << "up to max_lod_bias";
    EXPECT_EQ(governor.current().budget_bytes, 1024 * mib) << "memory control is off";

    const GovernorInput fast{2.0, 0, 0};
    const GovernorInput near{3.5, 0, 0};  // under the target, not under 80% of it
    for (int f = 0; f < 10; ++f) governor.update(near);
    EXPECT_EQ(governor.current().lod_bias, 2.0f) << "only calm frames relax";
    for (int f = 0; f < 3 * 8; ++f) governor.update(fast);
    EXPECT_EQ(governor.current().lod_bias, 0.0f) << "the bias goes first";
    EXPECT_EQ(governor.current().publish_limit, 8u);
    for (int f = 0; f < 3 * 14; ++f) governor.update(fast);
    EXPECT_EQ(governor.current().publish_limit, 64u);
    const GovernorInput unmeasured{std::nan(""), 0, 0};
    EXPECT_EQ(governor.update(unmeasured).publish_limit, 64u);
    EXPECT_EQ(governor.statistics().frames_over_target, 24u);
    EXPECT_EQ(governor.statistics().highest_lod_bias, 2.0f);
    EXPECT_EQ(governor.statistics().lowest_publish_limit, 8u);
}

TEST(StreamingGovernorTest, WithoutATargetNothingIsLimitedOrBiased) {
    StreamingGovernor governor(memory_only());
    const GovernorDecision d = governor.update({50.0, 80000 * mib, 1024 * mib});
    EXPECT_EQ(d.publish_limit, 0u);
    EXPECT_EQ(d.lod_bias, 0.0f);
}

TEST(StreamingGovernorTest, BadSettingsAreRefusedWithTheReason) {
    const auto refused = [](StreamingGovernorSettings s, const char* expected) {
        try {
            StreamingGovernor governor(s);
            ADD_FAILURE() << "accepted; expected: " << expected;
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
            EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
        }
    };
    StreamingGovernorSettings s = memory_only();
    s.frame_ms_target = std::nan("");
    refused(s, "frame_ms_target");
    s.frame_ms_target = -1;
    refused(s, "frame_ms_target");
    s.frame_ms_target = 1e9;
    refused(s, "frame_ms_target");
    s = memory_only();
    s.min_budget_bytes = 2048 * mib;
    refused(s, "budget range");
    s = memory_only();
    s.max_budget_bytes = 1024 * mib + 1;
    refused(s, "whole pages");
    s = memory_only();
    s.step_pages = 0;
    refused(s, "step_pages");
    s = memory_only();
    s.min_pages_per_frame = 0;
    refused(s, "pages per frame");
    s = memory_only();
    s.max_lod_bias = std::numeric_limits<float>::infinity();
    refused(s, "bias range");
    s = memory_only();
    s.page_bytes = 0;
    refused(s, "page_bytes");
}

}  // namespace
}  // namespace vtpage::vt
