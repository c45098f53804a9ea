// The deferred textured pass's quality counts (SampleQuality) against a count on the CPU: each
// pixel's wanted and sampled level from the reference sampler, over views with every page
// resident, with levels evicted, with the plane's edge in view; and not measured where the
// pass does not run (forward texturing, the overlay modes).
#include <gtest/gtest.h>

#include <cmath>

#include "../support/backend_fixture.hpp"
#include "renderer_rig.hpp"

namespace vtpage {
namespace {

using namespace vtpage::viewer;  // the renderer under test

using test::OrthoView;
constexpr std::uint32_t width = test::rig_width;
constexpr std::uint32_t height = test::rig_height;

class SampleQualityTest : public testing::TestWithParam<std::string>, protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        if (!set_up(GetParam(), reason)) GTEST_SKIP() << GetParam() << ": " << reason;
    }
    void TearDown() override { tear_down(); }

    // What the shade pass should count for a view with the current residency, pixel by pixel.
    SampleQuality cpu_count(const OrthoView& view) const {
        const test::ReferenceSampler sampler(
            shape, [this](std::uint64_t page) { return resident(page); }, texels);
        SampleQuality quality;
        quality.measured = true;
        for (std::uint32_t y = 0; y < height; ++y) {
            for (std::uint32_t x = 0; x < width; ++x) {
                const float u = view.u(x, width), v = view.v(y, height);
                if (u < 0 || u > 1 || v < 0 || v > 1) continue;
                std::uint32_t wanted = 0, got = 0;
                sampler.sample(u, v, view.su / width, 0, 0, view.sv / height, 0, &wanted, &got);
                ++quality.plane_pixels;
                quality.pixels_at_wanted_level += got == wanted;
                quality.missing_levels += got - wanted;
            }
        }
        return quality;
    }
};

void expect_counts_near(const SampleQuality& got, const SampleQuality& expected,
                        std::uint64_t tolerance) {
    EXPECT_TRUE(got.measured);
    EXPECT_NEAR(double(got.plane_pixels), double(expected.plane_pixels), double(tolerance));
    EXPECT_NEAR(double(got.pixels_at_wanted_level), double(expected.pixels_at_wanted_level),
                double(tolerance));
    EXPECT_NEAR(double(got.missing_levels), double(expected.missing_levels), double(tolerance));
}

TEST_P(SampleQualityTest, WithEveryPageResidentEveryPixelIsAtItsWantedLevel) {
    make_all_resident();
    const SampleQuality quality = render(OrthoView::at_lod(0.3f, 0.9f, 0.44f)).info.quality;
    ASSERT_TRUE(quality.measured);
    EXPECT_EQ(quality.plane_pixels, std::uint64_t(width) * height);
    EXPECT_EQ(quality.pixels_at_wanted_level, quality.plane_pixels);
    EXPECT_EQ(quality.missing_levels, 0u);
    EXPECT_DOUBLE_EQ(quality.share_at_wanted_level(), 1.0);
}

// The governor's bias makes every pixel sample coarser: the image changes, the feedback asks
// for coarser pages, and the quality counts the bias as levels missing although every page is
// resident.
TEST_P(SampleQualityTest, ALevelOfDetailBiasCountsAsLevelsMissing) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    const test::Frame plain = render(view);
    FrameDesc biased_desc = frame_for(view);
    biased_desc.lod_bias = 1.0f;
    renderer->render(biased_desc);
    auto done = renderer->finish();
    ASSERT_EQ(done.size(), 1u);
    const test::Frame biased = copy(done.back());
    const SampleQuality quality = biased.info.quality;
    ASSERT_TRUE(quality.measured);
    EXPECT_EQ(quality.plane_pixels, std::uint64_t(width) * height);
    EXPECT_LT(quality.share_at_wanted_level(), 0.05);
    EXPECT_NEAR(quality.mean_levels_missing(), 1.0, 0.05);
    EXPECT_NE(biased.colour, plain.colour);
    std::uint64_t plain_mips = 0, biased_mips = 0;
    for (const vt::FeedbackEntry& entry : plain.feedback) plain_mips += entry.tile().mip;
    for (const vt::FeedbackEntry& entry : biased.feedback) biased_mips += entry.tile().mip;
    EXPECT_GT(biased_mips, plain_mips) << "the feedback asks for coarser levels";
}

TEST_P(SampleQualityTest, EvictedLevelsShowAsPixelsBelowTheirWantedLevel) {
    make_all_resident();
    // Magnified: every pixel wants level 0. Without it, each falls back a level or more.
    const OrthoView view = OrthoView::at_lod(-1.3f, 0.34f, 0.46f);
    evict(level_pages(0));
    const SampleQuality level_0_gone = render(view).info.quality;
    const SampleQuality expected = cpu_count(view);
    EXPECT_EQ(expected.pixels_at_wanted_level, 0u);
    EXPECT_EQ(level_0_gone.plane_pixels, std::uint64_t(width) * height);
    EXPECT_EQ(level_0_gone.pixels_at_wanted_level, 0u);
    EXPECT_GE(level_0_gone.mean_levels_missing(), 1.0);
    expect_counts_near(level_0_gone, expected, 0);

    // Level 1 too: every pixel falls back to level 2 or the tail.
    evict(level_pages(1));
    const SampleQuality level_1_gone = render(view).info.quality;
    EXPECT_GE(level_1_gone.mean_levels_missing(), 2.0);
    expect_counts_near(level_1_gone, cpu_count(view), 0);
}

TEST_P(SampleQualityTest, APartlyResidentViewCountsWhatTheCpuCounts) {
    make_all_resident();
    // Over level 0's page boundary: the right page gone, the left one kept.
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    evict({layout.locate(0, 8, 3).page, layout.locate(0, 8, 4).page});
    const SampleQuality quality = render(view).info.quality;
    const SampleQuality expected = cpu_count(view);
    ASSERT_GT(expected.pixels_at_wanted_level, 0u);
    ASSERT_LT(expected.pixels_at_wanted_level, expected.plane_pixels);
    // A pixel whose centre is within rounding of the page boundary may land either side: one
    // column of the image at most.
    expect_counts_near(quality, expected, height);
    EXPECT_GT(quality.share_at_wanted_level(), 0.05);
    EXPECT_LT(quality.share_at_wanted_level(), 0.95);
}

TEST_P(SampleQualityTest, OnlyThePlanesPixelsCount) {
    make_all_resident();
    const OrthoView view{0.8f, 0.3f, 0.4f, 0.3f};  // the plane ends at u = 1, mid-image
    const SampleQuality quality = render(view).info.quality;
    const SampleQuality expected = cpu_count(view);
    ASSERT_GT(expected.plane_pixels, std::uint64_t(width) * height / 4);
    ASSERT_LT(expected.plane_pixels, std::uint64_t(width) * height * 3 / 4);
    expect_counts_near(quality, expected, height);  // the edge column
    EXPECT_EQ(quality.pixels_at_wanted_level, quality.plane_pixels);
}

TEST_P(SampleQualityTest, ForwardTexturingAndTheOverlaysDoNotMeasure) {
    make_all_resident();
    const OrthoView view = OrthoView::at_lod(0.3f, 0.9f, 0.44f);
    EXPECT_FALSE(render(view, RenderMode::residency).info.quality.measured);
    EXPECT_FALSE(render(view, RenderMode::mip_levels).info.quality.measured);
    VulkanRenderer forward(
        *context, *indirection, *textures,
        VulkanRendererSettings{.width = width, .height = height, .deferred_texturing = false});
    forward.render(frame_for(view));
    const auto done = forward.finish();
    ASSERT_EQ(done.size(), 1u);
    EXPECT_FALSE(done[0].quality.measured);
    EXPECT_EQ(done[0].quality.plane_pixels, 0u);
    EXPECT_TRUE(render(view).info.quality.measured) << "and the deferred pass again";
}

INSTANTIATE_TEST_SUITE_P(Backends, SampleQualityTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
