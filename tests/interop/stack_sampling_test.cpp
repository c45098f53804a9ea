// Material stacks on the device (lavapipe in CI), streamed by VirtualTextureStreaming: a stack
// sampled with vt_stack_sample_* gives, layer by layer, what each layer's own texture gives with
// vt_sample_* (trilinear and 16x anisotropic, sRGB and linear layers, 8- and 16-byte blocks at
// any record offset, uv far outside [0, 1] on repeating and mirrored axes, a level that is not
// resident falling back to the next), asks for the same tile, and falls back for every layer at
// once: one lookup stands for all of them.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "../support/random_blocks_source.hpp"
#include "compute_test_pipeline.hpp"
#include "streaming_test_frame.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/streaming/sources/stack_source.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

using namespace std::chrono_literals;
using vt::AddressMode;
using vt::ColorSpace;
using vt::TileFormat;

constexpr std::uint32_t stack_sampling_test_comp[] = {
#include "stack_sampling_test.comp.spv.inc"
};
constexpr std::uint32_t group_size = 64;

// The points, results and push constants of tests/interop/stack_sampling_test.comp.
struct StackPoint {
    float u = 0, v = 0;
    float dudx = 0, dvdx = 0;
    float dudy = 0, dvdy = 0;
    float padding[2] = {};
};
struct Rgba {
    float c[4];
};
struct StackPointResult {
    Rgba stack_trilinear[vt::max_stack_layers];
    Rgba layer_trilinear[vt::max_stack_layers];
    Rgba stack_aniso[vt::max_stack_layers];
    Rgba layer_aniso[vt::max_stack_layers];
    vt::FeedbackEntry stack_feedback;
    vt::FeedbackEntry layer_feedback;
    std::uint32_t stack_resident_mip = 0;
    std::uint32_t layer_resident_mip = 0;
    std::uint32_t stack_aniso_resident_mip = 0;
    std::uint32_t layer_aniso_resident_mip = 0;
};
struct StackSamplingPush {
    VkDeviceAddress indirection = 0;
    VkDeviceAddress directory = 0;
    VkDeviceAddress points = 0;
    VkDeviceAddress results = 0;
    std::uint32_t count = 0;
    std::uint32_t stack_id = 0;
    std::uint32_t layer_ids[vt::max_stack_layers] = {};
};
static_assert(sizeof(StackPoint) == 32 && sizeof(StackPointResult) == 288 &&
                  sizeof(StackSamplingPush) == 56,
              "the shader's std430");

struct StackedTextures {
    vt::TextureId stack = 0;
    std::vector<vt::TextureId> layers;
};

std::shared_ptr<const vt::TileSource> layer(std::uint32_t width, std::uint32_t height,
                                            TileFormat format, std::uint64_t seed,
                                            ColorSpace space) {
    return std::make_shared<test::RandomBlocksSource>(
        vt::TextureShape{width, height, format}, seed,
        vt::TextureSampling{AddressMode::repeat, AddressMode::mirrored_repeat, space});
}

// The layers as textures of their own, then the stack of them.
StackedTextures add_stack(VirtualTextureStreaming& streaming,
                          const std::vector<std::shared_ptr<const vt::TileSource>>& layers) {
    StackedTextures added;
    for (const auto& source : layers) added.layers.push_back(streaming.add_texture(source));
    added.stack = streaming.add_texture(std::make_shared<vt::StackSource>(layers));
    return added;
}

// Points at levels of detail 0 (not resident: every texture falls back to 1), 0.5, 1.5 and
// 3.25, round and stretched up to 13:1 along either axis or a diagonal, at uvs inside the
// texture, on its seams and periods away on both sides.
std::vector<StackPoint> points_for(std::uint32_t width, std::uint32_t height) {
    std::vector<StackPoint> points;
    const float uvs[] = {0.0f, 0.2f, 0.77f, 0.999f, -2.3f, 5.61f};
    const float stretches[] = {1.0f, 4.0f, 13.0f};
    for (const float lod : {0.0f, 0.5f, 1.5f, 3.25f}) {
        for (const float u : uvs) {
            for (const float v : uvs) {
                for (const float stretch : stretches) {
                    const float du = std::exp2(lod) / float(width);
                    const float dv = std::exp2(lod) / float(height);
                    points.push_back({u, v, du * stretch, 0, 0, dv});
                    points.push_back({v, u, du, 0, 0, dv * stretch});
                    points.push_back({u, v, du * stretch, dv * stretch, -du, dv});
                }
            }
        }
    }
    return points;
}

std::vector<StackPointResult> sample(VulkanContext& context, VirtualTextureStreaming& streaming,
                                     const StackedTextures& textures,
                                     const std::vector<StackPoint>& points) {
    const VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    const VkDeviceSize input_bytes = points.size() * sizeof(StackPoint);
    VulkanBuffer input(context, input_bytes, usage, BufferMemory::upload, "points");
    std::memcpy(input.mapped(), points.data(), input_bytes);
    input.flush();
    const VkDeviceSize output_bytes = points.size() * sizeof(StackPointResult);
    VulkanBuffer output(context, output_bytes, usage, BufferMemory::readback, "results");
    test::ComputeTestPipeline pipeline(context, stack_sampling_test_comp, sizeof(StackSamplingPush),
                                       group_size, "stack_sampling_test");
    StackSamplingPush push{streaming.indirection().device_address(),
                           streaming.directory().device_address(),
                           input.device_address(),
                           output.device_address(),
                           std::uint32_t(points.size()),
                           textures.stack};
    for (std::size_t l = 0; l < textures.layers.size(); ++l) push.layer_ids[l] = textures.layers[l];
    pipeline.run(push, push.count);
    output.invalidate();
    std::vector<StackPointResult> results(points.size());
    std::memcpy(results.data(), output.mapped(), output_bytes);
    return results;
}

float largest_difference(const Rgba& a, const Rgba& b) {
    float largest = 0;
    for (int c = 0; c < 4; ++c) {
        const float d = std::abs(a.c[c] - b.c[c]);
        largest = std::isnan(d) ? INFINITY : std::max(largest, d);
    }
    return largest;
}

// The stack against its layers, point by point.
void expect_stack_matches_layers(const std::vector<StackPoint>& points,
                                 const std::vector<StackPointResult>& results, std::size_t layers) {
    // The same bytes decoded by the same functions; only the compiler's order of operations
    // may differ between the two paths.
    constexpr float tolerance = 1.0f / (1 << 20);
    std::size_t differing = 0, fell_back = 0, stretched = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const StackPointResult& r = results[i];
        bool same = r.stack_resident_mip == r.layer_resident_mip &&
                    r.stack_aniso_resident_mip == r.layer_aniso_resident_mip &&
                    r.stack_feedback.texture_mip % 256 == r.layer_feedback.texture_mip % 256 &&
                    r.stack_feedback.tile_xy == r.layer_feedback.tile_xy;
        for (std::size_t l = 0; l < vt::max_stack_layers; ++l) {
            if (l >= layers) {
                same = same && largest_difference(r.stack_trilinear[l], Rgba{}) == 0;
                continue;
            }
            same = same &&
                   largest_difference(r.stack_trilinear[l], r.layer_trilinear[l]) <= tolerance &&
                   largest_difference(r.stack_aniso[l], r.layer_aniso[l]) <= tolerance;
        }
        if (i < points.size() / 4 && r.stack_resident_mip >= 1) ++fell_back;  // at level 0
        if (largest_difference(r.stack_aniso[0], r.stack_trilinear[0]) > 0) ++stretched;
        if (!same && ++differing <= 8) {
            ADD_FAILURE() << "point " << i << " uv (" << points[i].u << ", " << points[i].v
                          << "): stack and layers differ (resident " << r.stack_resident_mip
                          << " / " << r.layer_resident_mip << ")";
        }
    }
    EXPECT_EQ(differing, 0u) << "of " << points.size();
    EXPECT_GT(fell_back, 0u) << "no point fell back from the missing level 0";
    EXPECT_GT(stretched, 0u) << "no anisotropic sample differed from the trilinear one";
}

class StackSamplingTest : public testing::TestWithParam<std::string> {};

TEST_P(StackSamplingTest, AStackSamplesEachLayerAsItsOwnTextureDoes) {
    VTPAGE_BACKEND_OR_SKIP(backend, GetParam());
    VTPAGE_VULKAN_OR_SKIP(context, *backend);
    {
        VirtualTextureStreamingSettings settings;
        settings.page_count = 512;
        settings.frames_in_flight = 1;
        settings.streamer.table.region_size = 512 * vt::page_bytes;
        settings.streamer.table.budget_bytes = 96 * vt::page_bytes;
        VirtualTextureStreaming streaming(*context, *backend, settings);
        constexpr std::uint32_t w = 1500, h = 1000;
        // Three layers (a 4 x 4 page grid, BC5's 16-byte blocks at offset 8) and four (4 x 2,
        // 16-byte blocks at 16-byte offsets), sRGB colour layers among linear ones.
        const StackedTextures three =
            add_stack(streaming, {layer(w, h, TileFormat::bc1, 1, ColorSpace::srgb),
                                  layer(w, h, TileFormat::bc5, 2, ColorSpace::linear),
                                  layer(w, h, TileFormat::bc4, 3, ColorSpace::linear)});
        const StackedTextures four =
            add_stack(streaming, {layer(w, h, TileFormat::bc3, 4, ColorSpace::srgb),
                                  layer(w, h, TileFormat::bc5, 5, ColorSpace::linear),
                                  layer(w, h, TileFormat::bc1, 6, ColorSpace::srgb),
                                  layer(w, h, TileFormat::bc4, 7, ColorSpace::linear)});
        // Every page but level 0's, of every texture.
        std::vector<PageIndex> wanted;
        const vt::TextureSet& set = streaming.streamer().textures();
        for (vt::TextureId id = 0; id < set.texture_count(); ++id) {
            const vt::TextureLayout layout = set.layout(id);
            const std::uint64_t first = layout.mips[1].first_page;
            for (std::uint64_t p = first; p < layout.page_count; ++p) {
                wanted.push_back(set.base_page(id) + p);
            }
        }
        streaming.streamer().request(wanted);
        ASSERT_TRUE(streaming.wait_idle(test::under_thread_sanitizer ? 300s : 60s));
        UniqueVkCommandPool pool = test::make_command_pool(*context);
        test::run_streaming_frame(*context, streaming, pool.get());
        test::run_streaming_frame(*context, streaming, pool.get());
        const std::vector<StackPoint> points = points_for(w, h);
        expect_stack_matches_layers(points, sample(*context, streaming, three, points), 3);
        expect_stack_matches_layers(points, sample(*context, streaming, four, points), 4);
        streaming.shutdown();
    }
    test::expect_no_validation_messages(*context);
}

INSTANTIATE_TEST_SUITE_P(Backends, StackSamplingTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
