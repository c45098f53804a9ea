// Address modes and sRGB through the sampling include, on the device (lavapipe in CI) with
// validation. A compute shader samples points with vt_sample_grad_info, vt_output_colour and
// vt_feedback at any uv: a repeating or mirrored texture gives the same colour and asks for the
// same tile at uv and at uv shifted by whole periods (negative too); within half a texel of a
// seam it blends the opposite edge as ReferenceSampler does (Vulkan's wrapping of texel indices,
// from tiles whose borders follow the modes); an sRGB texture is filtered in linear light, and
// the viewer's image of one is the reference encoded back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <tuple>
#include <vector>

#include "../interop/compute_test_pipeline.hpp"
#include "../support/backend_fixture.hpp"
#include "renderer_rig.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"

namespace vtpage {
namespace {

using test::Colour;
using test::OrthoView;
using vt::AddressMode;
using vt::ColorSpace;
using vt::TileFormat;

constexpr std::uint32_t sample_points_test_comp[] = {
#include "sample_points_test.comp.spv.inc"
};
constexpr std::uint32_t group_size = 64;

// The points, results and push constants of tests/viewer/sample_points_test.comp.
struct SamplePoint {
    float u = 0, v = 0;
    float dudx = 0, dvdx = 0;
    float dudy = 0, dvdy = 0;
    float padding[2] = {};
};
struct PointResult {
    Colour colour;  // linear for an sRGB texture
    Colour output;  // vt_output_colour
    vt::FeedbackEntry feedback;
    std::uint32_t wanted_mip = 0;
    std::uint32_t resident_mip = 0;
    vt::FeedbackEntry aniso_feedback;  // vt_feedback_aniso at 16x
    std::uint32_t aniso_probes = 0;
    std::uint32_t padding = 0;
};
struct SamplePointsPush {
    VkDeviceAddress indirection = 0;
    VkDeviceAddress directory = 0;
    VkDeviceAddress points = 0;
    VkDeviceAddress results = 0;
    std::uint32_t count = 0;
    std::uint32_t texture_id = 0;
};
static_assert(sizeof(SamplePoint) == 32 && sizeof(PointResult) == 64 &&
                  sizeof(SamplePointsPush) == 40,
              "the shader's std430");

// The rig's texture sampled at `points` by the shader, every page as the rig has it.
std::vector<PointResult> sample_on_device(test::RendererRig& rig,
                                          std::span<const SamplePoint> points) {
    rig.render(OrthoView{});  // a frame uploads the indirection table and the directory
    VulkanContext& context = *rig.context;
    const VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VulkanBuffer input(context, points.size_bytes(), usage, BufferMemory::upload, "points");
    std::memcpy(input.mapped(), points.data(), points.size_bytes());
    input.flush();
    const VkDeviceSize output_bytes = points.size() * sizeof(PointResult);
    VulkanBuffer output(context, output_bytes, usage, BufferMemory::readback, "point results");
    test::ComputeTestPipeline pipeline(context, sample_points_test_comp, sizeof(SamplePointsPush),
                                       group_size, "sample_points_test");
    const SamplePointsPush push{
        rig.indirection->device_address(), rig.textures->device_address(), input.device_address(),
        output.device_address(),           std::uint32_t(points.size()),   test::rig_texture_id};
    pipeline.run(push, push.count);
    output.invalidate();
    std::vector<PointResult> results(points.size());
    std::memcpy(results.data(), output.mapped(), output_bytes);
    return results;
}

bool same(const Colour& a, const Colour& b) {
    return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a;
}
float largest_difference(const Colour& a, const Colour& b) {
    return std::max(
        {std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b), std::abs(a.a - b.a)});
}
bool same(const vt::FeedbackEntry& a, const vt::FeedbackEntry& b) {
    return a.texture_mip == b.texture_mip && a.tile_xy == b.tile_xy;
}

// A point at uv whose level of detail is `lod` on both axes of a texture of that size.
SamplePoint point_at(float u, float v, float lod, vt::TextureShape shape) {
    const float texels = std::exp2(lod);
    return {u, v, texels / float(shape.width), 0, 0, texels / float(shape.height)};
}

struct WrapCase {
    const char* name;
    vt::TextureShape shape;
    vt::TextureSampling sampling;
};
void PrintTo(const WrapCase& c, std::ostream* out) { *out << c.name; }

class VulkanSamplingModesTest : public testing::TestWithParam<std::tuple<std::string, WrapCase>>,
                                protected test::RendererRig {
protected:
    void SetUp() override {
        std::string reason;
        const WrapCase c = std::get<1>(GetParam());
        if (!set_up(std::get<0>(GetParam()), reason, c.shape,
                    {.content = {.sampling = c.sampling}})) {
            GTEST_SKIP() << std::get<0>(GetParam()) << ": " << reason;
        }
        make_all_resident();
    }
    void TearDown() override { tear_down(); }

    // uv shifted by whole periods of an axis: any integer where it repeats, even ones where it
    // mirrors (an odd shift reflects), none where it clamps.
    static float shifted(float uv, int k, AddressMode mode) {
        if (mode == AddressMode::clamp_to_edge) return uv;
        return uv + float(mode == AddressMode::mirrored_repeat ? 2 * k : k);
    }

    test::ReferenceSampler reference(vt::TextureSampling sampling) const {
        return test::ReferenceSampler(
            shape, [](std::uint64_t) { return true; }, texels, sampling);
    }
};

// Points of dyadic uvs (exact after any shift below) over the texture and at its seams, at
// levels 0, between 1 and 2, and 3.25.
std::vector<SamplePoint> base_points(vt::TextureShape shape) {
    std::vector<SamplePoint> points;
    std::vector<float> values;
    for (int i = 0; i < 8; ++i) values.push_back(float(i) / 8.0f + 1.0f / 512.0f);
    for (const float seam : {0.0f, 1.0f / 4096.0f, 1.0f / 2048.0f, 1.0f / 1024.0f,
                             1.0f - 1.0f / 4096.0f, 1.0f - 1.0f / 2048.0f, 1.0f}) {
        values.push_back(seam);
    }
    for (const float lod : {0.0f, 1.5f, 3.25f}) {
        for (const float u : values) {
            for (const float v : values) points.push_back(point_at(u, v, lod, shape));
        }
    }
    return points;
}

TEST_P(VulkanSamplingModesTest, ShiftedByWholePeriodsTheSampleAndItsFeedbackAreTheSame) {
    const std::vector<SamplePoint> base = base_points(shape);
    std::vector<SamplePoint> points = base;
    const std::vector<int> shifts = {-3, -1, 1, 37};
    for (const int k : shifts) {
        for (SamplePoint p : base) {
            p.u = shifted(p.u, k, content.sampling.address_u);
            p.v = shifted(p.v, -k, content.sampling.address_v);
            points.push_back(p);
        }
    }
    const std::vector<PointResult> found = sample_on_device(*this, points);
    std::size_t differing = 0;
    for (std::size_t s = 0; s < shifts.size(); ++s) {
        for (std::size_t i = 0; i < base.size(); ++i) {
            const PointResult& at = found[i];
            const PointResult& moved = found[(s + 1) * base.size() + i];
            if (same(at.colour, moved.colour) && same(at.feedback, moved.feedback)) continue;
            if (++differing <= 10) {
                ADD_FAILURE() << "uv (" << base[i].u << ", " << base[i].v << ") and ("
                              << points[(s + 1) * base.size() + i].u << ", "
                              << points[(s + 1) * base.size() + i].v << ") differ";
            }
        }
    }
    EXPECT_EQ(differing, 0u);
}

// A mirrored axis reflects at 0: -u samples and asks for what u does.
TEST_P(VulkanSamplingModesTest, MirroredAxisReflectsAtZero) {
    const vt::TextureSampling sampling = content.sampling;
    if (sampling.address_u != AddressMode::mirrored_repeat &&
        sampling.address_v != AddressMode::mirrored_repeat) {
        GTEST_SKIP() << "no mirrored axis";
    }
    const std::vector<SamplePoint> base = base_points(shape);
    std::vector<SamplePoint> points = base;
    for (SamplePoint p : base) {
        if (sampling.address_u == AddressMode::mirrored_repeat) p.u = -p.u;
        if (sampling.address_v == AddressMode::mirrored_repeat) p.v = -p.v;
        points.push_back(p);
    }
    const std::vector<PointResult> found = sample_on_device(*this, points);
    for (std::size_t i = 0; i < base.size(); ++i) {
        EXPECT_TRUE(same(found[i].colour, found[base.size() + i].colour))
            << "uv (" << base[i].u << ", " << base[i].v << ")";
        EXPECT_TRUE(same(found[i].feedback, found[base.size() + i].feedback))
            << "uv (" << base[i].u << ", " << base[i].v << ")";
    }
}

// Within half a texel of a seam (at the level sampled) the footprint blends the opposite edge's
// texels, from the edge tile's border: the reference wraps the footprint's texel indices
// instead, and the two agree; where an axis repeats, clamping would not (the pattern's edges
// differ; a mirrored edge reflects onto itself, which within half a texel is what clamping
// shows). Block-compressed cases use levels whose sides are multiples of 4, so that a border's
// blocks hold the same texels as the blocks they copy and decode to the same values.
TEST_P(VulkanSamplingModesTest, NearTheSeamTheSampleBlendsTheOppositeEdgeAsTheReference) {
    std::vector<SamplePoint> points;
    for (const float lod : {0.0f, 0.6f, 2.0f}) {
        const float half_u = 0.5f * std::exp2(lod) / float(shape.width);
        const float half_v = 0.5f * std::exp2(lod) / float(shape.height);
        for (const float k : {0.0f, 37.0f, -2.0f}) {
            for (const float fu : {0.1f, 0.5f, 0.9f}) {
                for (const float u : {k + fu * half_u, k + 1 - fu * half_u, k + 0.3f}) {
                    for (const float v : {k + fu * half_v, k + 1 - fu * half_v, k + 0.6f}) {
                        points.push_back(point_at(u, v, lod, shape));
                    }
                }
            }
        }
    }
    const std::vector<PointResult> found = sample_on_device(*this, points);
    const test::ReferenceSampler wrapped = reference(content.sampling);
    const test::ReferenceSampler clamped = reference({});
    float largest = 0, largest_from_clamp = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const SamplePoint& p = points[i];
        const Colour expected = wrapped.sample(p.u, p.v, p.dudx, p.dvdx, p.dudy, p.dvdy, 0);
        const float difference = largest_difference(found[i].colour, expected);
        largest = std::max(largest, difference);
        EXPECT_LE(difference, test::rig_tolerance / 255.0f)
            << "uv (" << p.u << ", " << p.v << ") lod " << std::log2(p.dudx * shape.width);
        const vt::FeedbackEntry asked =
            wrapped.feedback(test::rig_texture_id, p.u, p.v, p.dudx, p.dvdx, p.dudy, p.dvdy, 0);
        EXPECT_TRUE(same(found[i].feedback, asked)) << "uv (" << p.u << ", " << p.v << ")";
        const float wu = vt::wrap_uv(p.u, content.sampling.address_u);
        const float wv = vt::wrap_uv(p.v, content.sampling.address_v);
        largest_from_clamp = std::max(
            largest_from_clamp, largest_difference(expected, clamped.sample(wu, wv, p.dudx, p.dvdx,
                                                                            p.dudy, p.dvdy, 0)));
    }
    std::printf("%zu points near the seams: largest difference %.4f; from clamping %.4f\n",
                points.size(), double(largest), double(largest_from_clamp));
    if (content.sampling.address_u == AddressMode::repeat ||
        content.sampling.address_v == AddressMode::repeat) {
        EXPECT_GT(largest_from_clamp, 20 / 255.0f) << "the seams must show what wrapping changes";
    }
}

// With level 0's first page and level 1 gone, the fallback walks the wrapped uv: shifted by
// whole periods a sample falls back to the same level and colour, the reference's.
TEST_P(VulkanSamplingModesTest, FallbackFollowsTheWrappedUv) {
    if (layout.tail_first_mip < 2) GTEST_SKIP() << "too few levels outside the tail";
    evict({layout.mips[0].first_page});
    evict(level_pages(1));
    const std::vector<SamplePoint> base = base_points(shape);
    std::vector<SamplePoint> points = base;
    for (SamplePoint p : base) {
        p.u = shifted(p.u, -7, content.sampling.address_u);
        p.v = shifted(p.v, 5, content.sampling.address_v);
        points.push_back(p);
    }
    const std::vector<PointResult> found = sample_on_device(*this, points);
    const test::ReferenceSampler sampler(
        shape, [this](std::uint64_t page) { return resident(page); }, texels, content.sampling);
    std::size_t fell_back = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const SamplePoint& p = points[i];
        std::uint32_t wanted = 0, got = 0;
        const Colour expected =
            sampler.sample(p.u, p.v, p.dudx, p.dvdx, p.dudy, p.dvdy, 0, &wanted, &got);
        EXPECT_EQ(found[i].resident_mip, got) << "uv (" << p.u << ", " << p.v << ")";
        EXPECT_LE(largest_difference(found[i].colour, expected), test::rig_tolerance / 255.0f)
            << "uv (" << p.u << ", " << p.v << ")";
        fell_back += got != wanted;
    }
    for (std::size_t i = 0; i < base.size(); ++i) {
        EXPECT_TRUE(same(found[i].colour, found[base.size() + i].colour));
        EXPECT_EQ(found[i].resident_mip, found[base.size() + i].resident_mip);
    }
    EXPECT_GT(fell_back, 0u);
}

// A uv that is infinite or NaN (whose wrap is NaN) stays in the texture as a clamped one does:
// the sample reads a tile of the texture and the feedback names one.
TEST_P(VulkanSamplingModesTest, NonFiniteUvStaysInTheTexture) {
    const float infinity = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<SamplePoint> points;
    for (const float u : {infinity, -infinity, nan, 0.5f}) {
        for (const float v : {infinity, -infinity, nan, 0.5f}) {
            points.push_back(point_at(u, v, 0.0f, shape));
        }
    }
    const std::vector<PointResult> found = sample_on_device(*this, points);
    for (std::size_t i = 0; i < points.size(); ++i) {
        const vt::TileId tile = found[i].feedback.tile();
        EXPECT_EQ(tile.texture, test::rig_texture_id);
        EXPECT_TRUE(layout.has_tile(tile.mip, tile.x, tile.y))
            << "uv (" << points[i].u << ", " << points[i].v << ") asks for tile " << tile.x << ", "
            << tile.y << " of level " << tile.mip;
        EXPECT_EQ(found[i].resident_mip, found[i].wanted_mip) << "every page is resident";
    }
}

TEST_P(VulkanSamplingModesTest, NonFiniteDerivativesTakeAtMost16AnisotropicProbes) {
    const float infinity = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<SamplePoint> points;
    for (const float d : {infinity, -infinity, nan, 1e30f, 0.0f}) {
        points.push_back({0.3f, 0.6f, d, 0, 0, 1e-3f});
        points.push_back({0.3f, 0.6f, d, d, d, d});
        points.push_back({nan, 0.6f, 1e-3f, 0, 0, d});
    }
    const std::vector<PointResult> found = sample_on_device(*this, points);
    for (std::size_t i = 0; i < points.size(); ++i) {
        EXPECT_GE(found[i].aniso_probes, 1u) << "point " << i;
        EXPECT_LE(found[i].aniso_probes, 16u) << "point " << i;
        const vt::TileId tile = found[i].aniso_feedback.tile();
        EXPECT_TRUE(layout.has_tile(tile.mip, tile.x, tile.y))
            << "point " << i << " asks for tile " << tile.x << ", " << tile.y << " of level "
            << tile.mip;
    }
    // A footprint of 64 texels by 0.064 takes the most probes, one of 64 by 64 one.
    const float du = 64.0f / float(shape.width), dv = 64.0f / float(shape.height);
    const std::vector<SamplePoint> footprints = {{0.3f, 0.6f, du, 0, 0, dv / 1000.0f},
                                                 {0.3f, 0.6f, du, 0, 0, dv}};
    const std::vector<PointResult> shaped = sample_on_device(*this, footprints);
    EXPECT_EQ(shaped[0].aniso_probes, 16u);
    EXPECT_EQ(shaped[1].aniso_probes, 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, VulkanSamplingModesTest,
    testing::Combine(testing::ValuesIn(test::all_backend_names()),
                     testing::Values(WrapCase{"repeat",
                                              vt::TextureShape::square(10),
                                              {AddressMode::repeat, AddressMode::repeat}},
                                     WrapCase{"mirrored",
                                              vt::TextureShape::square(10),
                                              {AddressMode::mirrored_repeat,
                                               AddressMode::mirrored_repeat}},
                                     WrapCase{"repeat_mirrored_bc1_1024x512",
                                              {1024, 512, TileFormat::bc1},
                                              {AddressMode::repeat, AddressMode::mirrored_repeat}},
                                     WrapCase{"mirrored_clamp_srgb_bc1_512x1024",
                                              {512, 1024, TileFormat::bc1},
                                              {AddressMode::mirrored_repeat,
                                               AddressMode::clamp_to_edge, ColorSpace::srgb}})),
    [](const testing::TestParamInfo<std::tuple<std::string, WrapCase>>& param) {
        return std::get<0>(param.param) + "_" + std::get<1>(param.param).name;
    });

// Columns of black and white (alpha 0 and 255), at every level.
std::uint32_t black_white_columns(std::uint32_t, std::uint32_t x, std::uint32_t) {
    return (x & 1) ? 0xffffffffu : 0x00000000u;
}

class VulkanSrgbTest : public testing::TestWithParam<std::string> {};

// The sample halfway between a black and a white texel at level 0, of the columns stored in
// `format` and marked with `space`.
PointResult halfway_between_black_and_white(const std::string& backend, TileFormat format,
                                            ColorSpace space, std::string& reason) {
    test::RendererRig rig;
    const vt::TextureShape shape{256, 256, format};
    const test::TextureContent content{black_white_columns, {.color_space = space}};
    if (!rig.set_up(backend, reason, shape, {.content = content})) return {};
    rig.make_all_resident();
    // c = 1: the footprint's corner is texel 0 (black), its right neighbour white, weight 0.5.
    const SamplePoint point = point_at(1.0f / 256.0f, 0.5f, 0.0f, shape);
    const PointResult result = sample_on_device(rig, std::span(&point, 1))[0];
    rig.tear_down();
    return result;
}

// Decoded before filtering, as *_SRGB formats are: the mean of black and white in linear light
// (0.5 linear, 188 once encoded for the UNORM target), not the stored mean (128); alpha stays
// linear. The same texels marked linear give the stored mean.
TEST_P(VulkanSrgbTest, SrgbTexelsAreFilteredInLinearLight) {
    for (const TileFormat format : {TileFormat::rgba8, TileFormat::bc1}) {
        SCOPED_TRACE(vt::tile_format_name(format));
        std::string reason;
        const PointResult srgb =
            halfway_between_black_and_white(GetParam(), format, ColorSpace::srgb, reason);
        if (!reason.empty()) GTEST_SKIP() << GetParam() << ": " << reason;
        EXPECT_NEAR(srgb.colour.r, 0.5f, 0.002f);
        EXPECT_NEAR(srgb.colour.g, 0.5f, 0.002f);
        EXPECT_NEAR(srgb.colour.b, 0.5f, 0.002f);
        EXPECT_NEAR(int(test::to_unorm8(srgb.output.r)), 188, 1);
        EXPECT_NEAR(int(test::to_unorm8(srgb.output.b)), 188, 1);
        if (format == TileFormat::rgba8) {
            EXPECT_NEAR(srgb.colour.a, 0.5f, 0.002f) << "alpha is not decoded";
            EXPECT_EQ(test::to_unorm8(srgb.output.a), 128) << "nor encoded";
        }
        const PointResult linear =
            halfway_between_black_and_white(GetParam(), format, ColorSpace::linear, reason);
        EXPECT_NEAR(linear.colour.r, 0.5f, 0.002f);
        EXPECT_EQ(test::to_unorm8(linear.output.r), 128);
        EXPECT_EQ(test::to_unorm8(linear.output.g), 128);
    }
}

// The viewer's image of an sRGB texture (the pattern marked sRGB, BC1 too) is the reference's
// linear-light sample encoded back (vt_output_colour), at several levels and magnified, from the
// deferred textured pass (a compute pass) and from the forward one (the fragment shader).
TEST_P(VulkanSrgbTest, ViewerImageOfAnSrgbTextureIsTheReferenceEncodedBack) {
    for (const TileFormat format : {TileFormat::rgba8, TileFormat::bc1}) {
        SCOPED_TRACE(vt::tile_format_name(format));
        test::RendererRig rig;
        std::string reason;
        const test::TextureContent content{test::pattern_texel, {.color_space = ColorSpace::srgb}};
        if (!rig.set_up(GetParam(), reason, vt::TextureShape{1024, 1024, format},
                        {.content = content})) {
            GTEST_SKIP() << GetParam() << ": " << reason;
        }
        rig.make_all_resident();
        for (const bool deferred : {true, false}) {
            rig.renderer = std::make_unique<viewer::VulkanRenderer>(
                *rig.context, *rig.indirection, *rig.textures,
                viewer::VulkanRendererSettings{.width = test::rig_width,
                                               .height = test::rig_height,
                                               .feedback_divisor = test::rig_divisor,
                                               .deferred_texturing = deferred});
            for (const OrthoView& view :
                 {OrthoView{0, 0, 1, 1}, OrthoView::at_lod(0.5f, 0.3f, 0.2f),
                  OrthoView::at_lod(-1.0f, 0.5f, 0.5f), OrthoView::at_lod(2.3f, 0.1f, 0.1f)}) {
                const test::Frame frame = rig.render(view);
                const test::Difference d = test::compare(frame.colour, rig.reference(view));
                EXPECT_LE(d.largest, test::rig_tolerance)
                    << d.differing << " channels differ; view " << view.u0 << "," << view.v0 << " "
                    << view.su << "x" << view.sv << (deferred ? " deferred" : " forward");
            }
        }
        rig.tear_down();
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, VulkanSrgbTest, testing::ValuesIn(test::all_backend_names()),
                         [](const testing::TestParamInfo<std::string>& param) {
                             return param.param;
                         });

}  // namespace
}  // namespace vtpage
