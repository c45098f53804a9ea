// The identity check (VulkanRendererSettings::identity_check) against a page refilled under a
// frame in flight on purpose. The frame's submission is held on a timeline semaphore that the
// test raises; while it waits, a page the frame samples is evicted and another page committed
// and filled with its own identity. With reuse not deferred (PageTableSettings::defer_reuse
// off: the evicted physical page goes to the next commit at once) that refill lands in the
// physical page the held frame's indirection table still points at, and the check must count
// exactly the pixels that sample it, on every run: nothing here depends on timing, the refill
// is done before the frame can start. With deferred reuse (the default) the refill goes to
// another physical page and the check counts none.
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "renderer_rig.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"
#include "vtpage/streaming/sources/identity_source.hpp"

namespace vtpage {
namespace {

using namespace vtpage::viewer;  // the renderer under test

constexpr std::uint32_t identity_tag = 5;
// Across the border of mip 0's first two pages (x = 960 of 1024): about three quarters of the
// pixels sample layout page 0 at mip 0, the rest page 1; mip 1 is its page 0 everywhere.
const test::OrthoView view = test::OrthoView::at_lod(0.3f, 0.88f, 0.2f);
constexpr std::uint64_t refilled_page = 0;  // sampled by the held frame
constexpr std::uint64_t new_page = 5;       // mip 0's last page: out of view, not resident
constexpr std::uint64_t pixels = std::uint64_t(test::rig_width) * test::rig_height;

// What the check found in the frames before, during and after the refill.
struct RefillOutcome {
    IdentityCheckResult before, held, after;
    bool same_physical_page = false;  // the new page took the refilled page's physical page
};

// The rig with the identity check on and the identity texture's words in its pages.
class IdentityRig : public test::RendererRig {
public:
    bool set_up_with(const std::string& backend_name, bool defer_reuse, std::string& reason) {
        return set_up(backend_name, reason, vt::TextureShape::square(test::rig_size_log2),
                      {.defer_reuse = defer_reuse,
                       .identity_check = true,
                       .identity_texture_tag = identity_tag});
    }

    // Commits, fills with the identity texture's words and publishes.
    void make_identity_resident(const std::vector<std::uint64_t>& pages) {
        const vt::IdentitySource source(
            {.texture = identity_tag, .size_log2 = test::rig_size_log2});
        std::vector<std::byte> bytes(vt::page_bytes);
        const std::vector<PageMapping> mappings = commit(pages);
        for (const PageMapping& mapping : mappings) {
            source.fill_host(mapping.page - test::rig_base_page, bytes);
            backend->write(table->data_address(mapping.page), bytes.data(), bytes.size());
        }
        indirection->ready(mappings);
    }

    // Renders the view as one page-table frame; with a gate, its submission waits for the gate
    // to reach 1, which happens after while_held() has run.
    IdentityCheckResult render_checked(VulkanTimeline* gate = nullptr,
                                       const std::function<void()>& while_held = {}) {
        FrameDesc desc = frame_for(view);
        desc.capture = false;
        desc.user_tag = table->begin_frame();
        if (gate) desc.waits.push_back(FrameWait{gate->get(), 1});
        renderer->render(desc);
        if (while_held) while_held();
        if (gate) gate->signal(1);
        auto done = renderer->finish();
        EXPECT_EQ(done.size(), 1u);
        if (done.empty()) return {};
        table->complete_frame(done.back().user_tag);
        return done.back().identity;
    }

    // Every page but new_page resident; a frame; a held frame under which refilled_page is
    // evicted and new_page committed and filled; a frame.
    RefillOutcome refill_under_held_frame() {
        std::vector<std::uint64_t> pages;
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            if (page != new_page) pages.push_back(page);
        }
        make_identity_resident(pages);
        RefillOutcome outcome;
        outcome.before = render_checked();
        VulkanTimeline gate(*context, 0, false, "identity check gate");
        outcome.held = render_checked(&gate, [&] {
            const PageIndex refilled = test::rig_base_page + refilled_page;
            const DeviceAddress window = table->lookup(refilled)->physical.window;
            const std::vector<PageIndex> evicted = {refilled};
            table->evict(evicted);
            make_identity_resident({new_page});
            outcome.same_physical_page =
                table->lookup(test::rig_base_page + new_page)->physical.window == window;
        });
        outcome.after = render_checked();
        return outcome;
    }
};

// Each backend: host pages (lavapipe in CI), cuda pages on a GPU.
class IdentityCheckTest : public testing::TestWithParam<std::string> {};

TEST_P(IdentityCheckTest, CatchesAPageRefilledUnderAFrameInFlightEveryRun) {
    for (int run = 0; run < 2; ++run) {
        IdentityRig rig;
        std::string reason;
        if (!rig.set_up_with(GetParam(), /*defer_reuse=*/false, reason)) {
            GTEST_SKIP() << GetParam() << ": " << reason;
        }
        const RefillOutcome outcome = rig.refill_under_held_frame();
        rig.tear_down();
        ASSERT_TRUE(outcome.same_physical_page) << "the refill must land under the held frame";
        EXPECT_TRUE(outcome.before.ran && outcome.held.ran && outcome.after.ran);
        EXPECT_EQ(outcome.before.pixels, pixels);
        EXPECT_EQ(outcome.before.violations, 0u) << "run " << run;
        EXPECT_EQ(outcome.before.coarser, 0u);
        EXPECT_EQ(outcome.held.pixels, pixels);
        // Exactly the pixels that sampled the refilled page: those that fall back to a coarser
        // level once it is gone from the table.
        EXPECT_GT(outcome.held.violations, pixels / 2) << "run " << run;
        EXPECT_LT(outcome.held.violations, pixels);
        EXPECT_EQ(outcome.held.violations, outcome.after.coarser) << "run " << run;
        EXPECT_EQ(outcome.after.violations, 0u);
    }
}

TEST_P(IdentityCheckTest, DeferredReuseKeepsTheHeldFrameOnItsPages) {
    IdentityRig rig;
    std::string reason;
    if (!rig.set_up_with(GetParam(), /*defer_reuse=*/true, reason)) {
        GTEST_SKIP() << GetParam() << ": " << reason;
    }
    const RefillOutcome outcome = rig.refill_under_held_frame();
    rig.tear_down();
    EXPECT_FALSE(outcome.same_physical_page) << "held back until the frame completes";
    EXPECT_EQ(outcome.before.violations, 0u);
    EXPECT_EQ(outcome.held.pixels, pixels);
    EXPECT_EQ(outcome.held.violations, 0u);
    EXPECT_EQ(outcome.held.coarser, 0u) << "the held frame still saw the page it was given";
    EXPECT_GT(outcome.after.coarser, pixels / 2);
    EXPECT_EQ(outcome.after.violations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, IdentityCheckTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
