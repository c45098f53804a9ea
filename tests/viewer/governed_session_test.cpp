// The streaming governor in a real session (Vulkan, the streamer, the identity check on every
// frame): another process taking device memory is simulated through the session's memory
// probe on top of what the backend really holds, so that the run is the same on any machine.
// The session gives pages back a step a frame down to the lowered budget, takes them again when
// the memory returns, and no frame in between shows a texel of the wrong page.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>

#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"
#include "camera.hpp"
#include "camera_path.hpp"
#include "streaming_session.hpp"

namespace vtpage::viewer {
namespace {

constexpr std::size_t mib = std::size_t(1) << 20;
constexpr std::size_t simulated_device = 256 * mib;
constexpr std::uint32_t width = 192, height = 108;

class GovernedSessionTest : public testing::TestWithParam<std::string> {
protected:
    SessionSettings settings() {
        SessionSettings s;
        s.backend = GetParam();
        s.texture = "identity";
        s.texture_size_log2 = 14;
        s.budget_bytes = 64 * mib;
        s.width = width;
        s.height = height;
        s.identity_check = true;
        s.validation = test::test_validation_mode() != ValidationMode::off;
        vt::StreamingGovernorSettings governor;
        governor.headroom_bytes = 32 * mib;
        governor.min_budget_bytes = 16 * mib;
        governor.step_pages = 4;
        governor.grow_after_frames = 5;
        s.governor = governor;
        // What the session's backend holds is real; the other process is the test's.
        s.memory_probe = [this] {
            const std::size_t held = session_->backend().live_resources().page_bytes;
            const std::size_t taken = std::min(simulated_device, held + other_.load());
            return MemoryInfo{simulated_device, simulated_device - taken};
        };
        return s;
    }
    // Renders frames of the benchmark flight until `done` holds (checked after each frame) or
    // `max_frames` have been rendered; whether `done` held. A camera that holds still asks for
    // no new pages once they are resident: then nothing but the governor gives pages back.
    bool fly_until(const std::function<bool()>& done, int max_frames, bool moving = true) {
        const CameraPath& path = *find_camera_path("benchmark");
        Camera camera;
        const double aspect = double(width) / height;
        for (int i = 0; i < max_frames; ++i) {
            camera.pose = path.at(time_, session_->plane_extent(), aspect);
            if (moving) time_ += 0.2;
            SessionFrame frame;
            frame.view_projection = camera.view_projection(aspect);
            session_->render(frame);
            if (done()) return true;
        }
        return false;
    }
    std::size_t held() const { return session_->backend().live_resources().page_bytes; }
    std::size_t budget() const { return session_->counters().governor.budget_bytes; }

    std::unique_ptr<StreamingSession> session_;
    std::atomic<std::size_t> other_{0};
    double time_ = 0;
};

TEST_P(GovernedSessionTest, GivesPagesBackUnderPressureTakesThemAgainAndShowsNoWrongTexel) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(context, *backend);
    context.reset();
    backend.reset();
    session_ = std::make_unique<StreamingSession>(settings());
    const std::size_t held_at_start = held();
    EXPECT_EQ(held_at_start, 64 * mib) << "the whole budget is created before the first frame";

    // Flying until the budget is full of pages, most of them no longer in view.
    ASSERT_TRUE(
        fly_until([&] { return session_->counters().streamer.table.resident_pages >= 24; }, 400));
    EXPECT_EQ(budget(), 64 * mib) << "memory is plentiful: nothing changes";

    // Holding still until nothing more streams.
    ASSERT_TRUE(fly_until(
        [&] {
            const auto streamer = session_->counters().streamer;
            return streamer.pending + streamer.in_flight == 0;
        },
        200, false));
    fly_until([] { return false; }, 5, false);
    const std::uint64_t commits = session_->counters().streamer.table.commits;

    // The other process takes all that is free: 32 MiB short of the headroom.
    other_ = simulated_device - held();
    ASSERT_TRUE(fly_until([&] { return budget() == 32 * mib && held() <= 32 * mib; }, 200, false))
        << "budget " << budget() / mib << " MiB, held " << held() / mib << " MiB";
    EXPECT_EQ(session_->counters().streamer.table.commits, commits)
        << "the view was resident: the governor alone gave the pages back";
    EXPECT_GT(session_->counters().streamer.table.over_budget_evictions, 0u);
    const SessionCounters pressed = session_->counters();
    EXPECT_EQ(pressed.governor_statistics.lowest_budget_bytes, 32 * mib);
    EXPECT_LE(pressed.streamer.table.resident_pages, 16u);
    fly_until([] { return false; }, 20);  // still streaming, within the lowered budget
    EXPECT_LE(held(), 32 * mib);

    // The memory returns: the budget grows back, a step at a time, as pages are needed.
    other_ = 0;
    ASSERT_TRUE(fly_until([&] { return budget() == 64 * mib; }, 300))
        << "budget " << budget() / mib << " MiB";
    session_->finish();
    const SessionCounters end = session_->counters();
    EXPECT_GE(end.governor_statistics.grows, 2u);
    EXPECT_GE(end.governor_statistics.shrinks, 1u);
    EXPECT_GT(end.identity.frames, 50u);
    EXPECT_EQ(end.identity.violations, 0u)
        << "first at frame " << end.identity.first_violating_frame;
    EXPECT_EQ(end.validation.errors, 0u);
    EXPECT_EQ(end.validation.warnings, 0u);
    const std::vector<GovernorSample> timeline = session_->governor_timeline();
    ASSERT_FALSE(timeline.empty());
    EXPECT_EQ(timeline.front().budget_bytes, 64 * mib);
    EXPECT_GT(timeline.back().seconds, timeline.front().seconds);
    session_.reset();
}

INSTANTIATE_TEST_SUITE_P(Backends, GovernedSessionTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage::viewer
