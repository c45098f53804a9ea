// The viewer's renderer with anisotropic filtering (VulkanRendererSettings::max_anisotropy): a
// head-on view is what the trilinear renderer draws, bit for bit, in the image and the feedback;
// a grazing view samples finer levels than trilinear, the deferred pass (derivatives from the
// neighbouring pixels' positions) as the forward one (the fragment shader's derivatives) within
// a small tolerance, and asks for finer levels, never coarser ones. The include's filtering
// itself is measured in vulkan_anisotropy_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>

#include "../support/backend_fixture.hpp"
#include "renderer_rig.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage {
namespace {

using namespace vtpage::viewer;  // the renderer under test

using test::Frame;
using test::OrthoView;

// World to clip, column-major: a camera just above the plane's near edge looking across it
// (Vulkan clip space, y down, depth 0..1), as in vulkan_renderer_test's perspective feedback.
std::array<float, 16> grazing_view_projection() {
    const float eye[3] = {0.5f, 0.05f, -0.05f};
    const float target[3] = {0.5f, 0.0f, 0.6f};
    float f[3] = {target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]};
    const float fl = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (float& c : f) c /= fl;
    float s[3] = {-f[2], 0, f[0]};  // f x up, up = y
    const float sl = std::sqrt(s[0] * s[0] + s[2] * s[2]);
    for (float& c : s) c /= sl;
    const float u[3] = {s[1] * f[2] - s[2] * f[1], s[2] * f[0] - s[0] * f[2],
                        s[0] * f[1] - s[1] * f[0]};
    const float near = 0.01f, far = 10.0f, tan_half = std::tan(0.5f),
                aspect = float(test::rig_width) / float(test::rig_height);
    const auto dot = [&](const float* a) { return a[0] * eye[0] + a[1] * eye[1] + a[2] * eye[2]; };
    const float view[4][4] = {{s[0], s[1], s[2], -dot(s)},
                              {u[0], u[1], u[2], -dot(u)},
                              {-f[0], -f[1], -f[2], dot(f)},
                              {0, 0, 0, 1}};
    const float projection[4][4] = {{1 / (aspect * tan_half), 0, 0, 0},
                                    {0, -1 / tan_half, 0, 0},
                                    {0, 0, far / (near - far), far * near / (near - far)},
                                    {0, 0, -1, 0}};
    std::array<float, 16> m{};
    for (int row = 0; row < 4; ++row) {
        for (int col = 0; col < 4; ++col) {
            for (int k = 0; k < 4; ++k) m[col * 4 + row] += projection[row][k] * view[k][col];
        }
    }
    return m;
}

class VulkanRendererAnisotropyTest : public testing::TestWithParam<std::string>,
                                     protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        if (!set_up(GetParam(), reason)) GTEST_SKIP() << GetParam() << ": " << reason;
        make_all_resident();
    }
    void TearDown() override { tear_down(); }

    void use_renderer(float max_anisotropy, bool deferred) {
        renderer.reset();
        renderer = std::make_unique<VulkanRenderer>(
            *context, *indirection, *textures,
            VulkanRendererSettings{.width = test::rig_width,
                                   .height = test::rig_height,
                                   .feedback_divisor = test::rig_divisor,
                                   .deferred_texturing = deferred,
                                   .max_anisotropy = max_anisotropy});
    }
    Frame render_grazing() {
        FrameDesc desc = frame_for(OrthoView{});
        desc.view_projection = grazing_view_projection();
        renderer->render(desc);
        auto done = renderer->finish();
        EXPECT_EQ(done.size(), 1u);
        return done.empty() ? Frame{} : copy(done.back());
    }
};

bool same_feedback(const Frame& a, const Frame& b) {
    if (a.feedback.size() != b.feedback.size()) return false;
    for (std::size_t i = 0; i < a.feedback.size(); ++i) {
        if (a.feedback[i].texture_mip != b.feedback[i].texture_mip ||
            a.feedback[i].tile_xy != b.feedback[i].tile_xy) {
            return false;
        }
    }
    return true;
}

// Head-on the footprint is round: 16x draws and asks for what trilinear does.
TEST_P(VulkanRendererAnisotropyTest, HeadOnItIsTheTrilinearRenderer) {
    for (const bool deferred : {true, false}) {
        // Views of as many texels a pixel across as down (OrthoView{0, 0, 1, 1} is not one).
        for (const OrthoView& view :
             {OrthoView::at_lod(3.2f, 0.1f, 0.1f), OrthoView::at_lod(0.6f, 0.3f, 0.2f),
              OrthoView::at_lod(-1.0f, 0.5f, 0.5f)}) {
            SCOPED_TRACE(testing::Message() << (deferred ? "deferred" : "forward") << " view "
                                            << view.u0 << "," << view.v0 << " " << view.su);
            use_renderer(1, deferred);
            const Frame trilinear = render(view);
            use_renderer(16, deferred);
            const Frame anisotropic = render(view);
            EXPECT_EQ(anisotropic.colour, trilinear.colour);
            EXPECT_TRUE(same_feedback(anisotropic, trilinear));
            EXPECT_LE(test::compare(anisotropic.colour, reference(view)).largest,
                      test::rig_tolerance);
        }
    }
}

// Across the plane the pattern's alpha (255 - 10 x the level sampled) rises where 16x samples
// finer levels; deferred and forward agree; the feedback asks for finer levels.
TEST_P(VulkanRendererAnisotropyTest, AtAGrazingViewItSamplesAndAsksForFinerLevels) {
    use_renderer(1, true);
    const Frame trilinear = render_grazing();
    use_renderer(16, true);
    const Frame deferred = render_grazing();
    use_renderer(16, false);
    const Frame forward = render_grazing();
    ASSERT_EQ(trilinear.colour.size(), deferred.colour.size());
    ASSERT_EQ(trilinear.colour.size(), forward.colour.size());
    double alpha_trilinear = 0, alpha_deferred = 0, forward_vs_deferred = 0;
    std::size_t plane = 0;
    for (std::size_t i = 0; i < trilinear.colour.size(); i += 4) {
        if (std::equal(test::rig_sky, test::rig_sky + 4, &trilinear.colour[i])) continue;
        ++plane;
        alpha_trilinear += trilinear.colour[i + 3];
        alpha_deferred += deferred.colour[i + 3];
        for (std::size_t c = 0; c < 4; ++c) {
            forward_vs_deferred +=
                std::abs(int(forward.colour[i + c]) - int(deferred.colour[i + c]));
        }
    }
    ASSERT_GT(plane, std::size_t(test::rig_width) * test::rig_height / 4);
    alpha_trilinear /= double(plane);
    alpha_deferred /= double(plane);
    forward_vs_deferred /= 4.0 * double(plane);
    std::printf(
        "grazing view, %zu plane pixels: mean alpha %.1f trilinear, %.1f at 16x (+10 a "
        "level finer); forward vs deferred mean difference %.2f of 255\n",
        plane, alpha_trilinear, alpha_deferred, forward_vs_deferred);
    EXPECT_GE(alpha_deferred, alpha_trilinear + 5) << "at least half a level finer on average";
    EXPECT_LE(forward_vs_deferred, 3.0);

    std::size_t asked = 0, finer = 0, coarser = 0;
    for (std::size_t i = 0; i < deferred.feedback.size(); ++i) {
        if (deferred.feedback[i].is_empty() || trilinear.feedback[i].is_empty()) continue;
        ++asked;
        finer += deferred.feedback[i].tile().mip < trilinear.feedback[i].tile().mip;
        coarser += deferred.feedback[i].tile().mip > trilinear.feedback[i].tile().mip;
    }
    EXPECT_TRUE(same_feedback(deferred, forward)) << "the feedback pass is the same in both";
    EXPECT_GE(finer, asked / 2) << asked << " feedback pixels";
    EXPECT_EQ(coarser, 0u);
}

TEST_P(VulkanRendererAnisotropyTest, RefusesAnisotropyOutsideOneToSixteen) {
    for (const float bad : {0.0f, 0.5f, 17.0f, std::nanf("")}) {
        try {
            use_renderer(bad, true);
            ADD_FAILURE() << "max_anisotropy " << bad << " accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, VulkanRendererAnisotropyTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage
