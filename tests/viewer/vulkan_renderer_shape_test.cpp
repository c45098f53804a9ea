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
