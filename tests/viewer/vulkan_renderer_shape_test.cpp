// Textures of any shape and tile format through the renderer: non-square, not powers of two, down
// to 1 x 1, RGBA8 and block-compressed. Each pixel must be what the reference sampler computes
// from the flat pattern (levels of Vulkan's chain, clamp-to-edge at the real edge; for the BC
// formats the pattern as libsquish decodes the blocks), and the feedback must name the tiles the
// reference names, so that the shader's addressing equals the C++ layout's at every level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "../support/backend_fixture.hpp"
#include "renderer_rig.hpp"

namespace vtpage {
namespace {

using test::OrthoView;

struct ShapeCase {
    const char* name;
    std::uint32_t width, height;
    vt::TileFormat format = vt::TileFormat::rgba8;
};
void PrintTo(const ShapeCase& c, std::ostream* out) { *out << c.name; }

class VulkanRendererShapeTest : public testing::TestWithParam<std::tuple<std::string, ShapeCase>>,
                                protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        const std::string& name = std::get<0>(GetParam());
        const ShapeCase c = std::get<1>(GetParam());
        if (!set_up(name, reason, {c.width, c.height, c.format})) {
            GTEST_SKIP() << name << ": " << reason;
        }
    }
    void TearDown() override { tear_down(); }

    // A view of uv [u0, u0 + su] x [v0, v0 + sv] with 2^lod texels of mip 0 per pixel on both
    // axes, placed at (fx, fy) of the room the texture leaves (0: left/top, 1: right/bottom).
    OrthoView view_at(float lod, float fx, float fy) const {
        const float texels_per_pixel = std::exp2(lod);
        const float su = std::min(1.0f, texels_per_pixel * test::rig_width / float(shape.width));
        const float sv = std::min(1.0f, texels_per_pixel * test::rig_height / float(shape.height));
        return {(1 - su) * fx, (1 - sv) * fy, su, sv};
    }

    void expect_matches_reference(const OrthoView& view) {
        const test::Frame frame = render(view);
        const test::Difference d = test::compare(frame.colour, reference(view));
        EXPECT_LE(d.largest, test::rig_tolerance)
            << d.differing << " channels differ; view " << view.u0 << "," << view.v0 << " "
            << view.su << "x" << view.sv;
    }
};

TEST_P(VulkanRendererShapeTest, EveryLevelMatchesTheCpuReference) {
    make_all_resident();
    EXPECT_EQ(layout.mip_count,
              vt::TextureLayout::mip_count_of(std::max(shape.width, shape.height)));
    // The whole texture (anisotropic where it is not square), the far corner magnified (the
    // real edge clamps), and views between levels, at several places.
    expect_matches_reference({0, 0, 1, 1});
    expect_matches_reference(view_at(-1.3f, 1, 1));
    expect_matches_reference(view_at(-0.4f, 0, 1));
    for (float lod = 0.3f; lod < float(layout.mip_count); lod += 1.1f) {
        expect_matches_reference(view_at(lod, 0.37f, 0.61f));
    }
}

TEST_P(VulkanRendererShapeTest, FallbackFindsTheCoveringCoarserPage) {
    make_all_resident();
    if (layout.tail_first_mip == 0) GTEST_SKIP() << "the whole texture is its tail";
    // Without level 0 every pixel falls back to the page of level 1 (or coarser) that covers
    // its uv, which at these sizes is not the page of tile x / 2.
    evict(level_pages(0));
    expect_matches_reference(view_at(-0.5f, 0.5f, 0.5f));
    expect_matches_reference(view_at(0.2f, 1, 0));
}

TEST_P(VulkanRendererShapeTest, FeedbackNamesTheTilesTheReferenceNames) {
    make_resident({layout.tail_page()});
    test::ReferenceSampler sampler(shape, [](std::uint64_t) { return true; });
    for (const OrthoView& view : {view_at(0.2f, 0.8f, 0.3f), view_at(1.4f, 0.2f, 0.9f)}) {
        const test::Frame frame = render(view);
        const std::uint32_t fw = renderer->feedback_width(), fh = renderer->feedback_height();
        ASSERT_EQ(frame.feedback.size(), std::size_t(fw) * fh);
        const float bias = renderer->feedback_lod_bias();
        std::size_t compared = 0;
        for (std::uint32_t y = 0; y < fh; ++y) {
            for (std::uint32_t x = 0; x < fw; ++x) {
                const float u = view.u(x, fw), v = view.v(y, fh);
                const vt::TileId want = sampler
                                            .feedback(test::rig_texture_id, u, v, view.su / fw, 0,
                                                      0, view.sv / fh, bias)
                                            .tile();
                const vt::TileId got = frame.feedback[std::size_t(y) * fw + x].tile();
                ASSERT_TRUE(layout.has_tile(got.mip, got.x, got.y)) << x << "," << y;
                // A sample within a hundredth of a texel of a tile edge may land either side.
                float cx = 0, cy = 0;
                sampler.level_position(want.mip, u, v, cx, cy);
                const float payload = float(layout.tile_format().tile_payload());
                const float ex = std::fmod(cx, payload), ey = std::fmod(cy, payload);
                if (std::min(ex, payload - ex) < 0.01f || std::min(ey, payload - ey) < 0.01f) {
                    continue;
                }
                ++compared;
                EXPECT_EQ(got.mip, want.mip) << "pixel " << x << "," << y;
                EXPECT_EQ(got.x, want.x) << "pixel " << x << "," << y;
                EXPECT_EQ(got.y, want.y) << "pixel " << x << "," << y;
            }
        }
        EXPECT_GT(compared, std::size_t(fw) * fh * 9 / 10);
    }
}

TEST_P(VulkanRendererShapeTest, ForwardAndDeferredTexturingDrawTheSamePixels) {
    make_all_resident();
    if (layout.tail_first_mip > 0) evict(level_pages(0));  // some samples fall back
    const std::vector<OrthoView> views = {
        {0, 0, 1, 1}, view_at(-1.3f, 1, 1), view_at(0.6f, 0.3f, 0.7f)};
    std::vector<test::Frame> deferred;
    for (const OrthoView& view : views) deferred.push_back(render(view));
    renderer = std::make_unique<viewer::VulkanRenderer>(
        *context, *indirection, *textures,
        viewer::VulkanRendererSettings{.width = test::rig_width,
                                       .height = test::rig_height,
                                       .feedback_divisor = test::rig_divisor,
                                       .deferred_texturing = false});
    for (std::size_t i = 0; i < views.size(); ++i) {
        const test::Frame forward = render(views[i]);
        const test::Difference d = test::compare(forward.colour, deferred[i].colour);
        // The colour attachment and packUnorm4x8 may round a value at .5 either way.
        EXPECT_LE(d.largest, 1) << d.differing << " channels differ in view " << i;
        EXPECT_EQ(forward.feedback.size(), deferred[i].feedback.size());
    }
}

// The plane of a 1500 x 700 texture, 1500 x 700 world units, seen top-down: it keeps the
// texture's aspect, with uv = (x / 1500, z / 700).
class VulkanRendererAspectTest : public testing::TestWithParam<std::string>,
                                 protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        if (!set_up(GetParam(), reason, {1500, 700, vt::TileFormat::rgba8})) {
            GTEST_SKIP() << GetParam() << ": " << reason;
        }
    }
    void TearDown() override { tear_down(); }
};

bool is_sky(const std::vector<std::uint8_t>& colour, std::uint32_t x, std::uint32_t y) {
    const std::uint8_t* pixel = &colour[(std::size_t(y) * test::rig_width + x) * 4];
    return std::equal(pixel, pixel + 4, test::rig_sky);
}

TEST_P(VulkanRendererAspectTest, NonSquarePlaneKeepsTheTexturesAspect) {
    make_all_resident();
    // World x in [0, 1600], z in [0, 1200] over 64 x 48 pixels: 25 units a pixel on both axes,
    // so the plane fills columns 0..59 and rows 0..27, and the sky the rest.
    viewer::FrameDesc desc = frame_for(OrthoView{0, 0, 1600, 1200});
    desc.plane_extent = {1500.0f, 700.0f};
    renderer->render(desc);
    const auto done = renderer->finish();
    ASSERT_EQ(done.size(), 1u);
    const test::Frame frame = copy(done.back());
    ASSERT_EQ(frame.colour.size(), std::size_t(test::rig_width) * test::rig_height * 4);
    EXPECT_FALSE(is_sky(frame.colour, 59, 10));  // the right edge, where 1500 / 700 puts it
    EXPECT_TRUE(is_sky(frame.colour, 60, 10));
    EXPECT_FALSE(is_sky(frame.colour, 10, 27));  // the bottom edge
    EXPECT_TRUE(is_sky(frame.colour, 10, 28));
    // Inside, each pixel is the texture at uv = world / (1500, 700); the same view in uv.
    const std::vector<std::uint8_t> expected =
        reference(OrthoView{0, 0, 1600.0f / 1500.0f, 1200.0f / 700.0f});
    int largest = 0;
    for (std::uint32_t y = 0; y < 28; ++y) {
        for (std::uint32_t x = 0; x < 60; ++x) {
            for (std::size_t c = 0; c < 4; ++c) {
                const std::size_t i = (std::size_t(y) * test::rig_width + x) * 4 + c;
                largest = std::max(largest, std::abs(int(frame.colour[i]) - int(expected[i])));
            }
        }
    }
    EXPECT_LE(largest, test::rig_tolerance);
}

INSTANTIATE_TEST_SUITE_P(Backends, VulkanRendererAspectTest,
                         testing::ValuesIn(test::all_backend_names()),
                         [](const testing::TestParamInfo<std::string>& param) {
                             return param.param;
                         });

INSTANTIATE_TEST_SUITE_P(
    Shapes, VulkanRendererShapeTest,
    testing::Combine(testing::ValuesIn(test::all_backend_names()),
                     testing::Values(ShapeCase{"1x1", 1, 1}, ShapeCase{"1x37", 1, 37},
                                     ShapeCase{"3x5", 3, 5}, ShapeCase{"241x481", 241, 481},
                                     ShapeCase{"1500x700", 1500, 700},
                                     ShapeCase{"2000x13", 2000, 13},
                                     // Block-compressed tiles, decoded by the shader, against
                                     // libsquish's decode of the same blocks.
                                     ShapeCase{"bc1_1500x700", 1500, 700, vt::TileFormat::bc1},
                                     ShapeCase{"bc3_241x481", 241, 481, vt::TileFormat::bc3},
                                     ShapeCase{"bc4_700x1500", 700, 1500, vt::TileFormat::bc4},
                                     ShapeCase{"bc5_3x5", 3, 5, vt::TileFormat::bc5},
                                     ShapeCase{"bc5_1000x1000", 1000, 1000, vt::TileFormat::bc5})),
    [](const testing::TestParamInfo<std::tuple<std::string, ShapeCase>>& param) {
        return std::get<0>(param.param) + "_" + std::get<1>(param.param).name;
    });

}  // namespace
}  // namespace vtpage
