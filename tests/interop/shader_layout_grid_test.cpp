// shaders/vtpage/virtual_texture.glsl's addressing against TextureLayout, on lavapipe (or any
// Vulkan device). Textures of shapes that are neither square nor powers of two, in every tile
// format, are described by VulkanTextureDirectory; a compute shader addresses a grid of uv
// samples at every mip level with the library's own functions (vt_level_position, vt_tile_page,
// vt_bilinear_footprint), and every sample must find the position, tile, page, slot and texel
// in the tile that TextureLayout gives. Textures that repeat or mirror (per axis) are sampled
// far outside [0, 1] too: the shader's vt_wrap must equal vt::wrap_uv, and the footprint at a
// wrapped edge must read the border texels that Vulkan's wrapping of texel indices names.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/vulkan_texel_wrap.hpp"
#include "compute_test_pipeline.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

using vt::AddressMode;
using vt::TileFormat;

constexpr std::uint32_t shader_layout_grid_test_comp[] = {
#include "shader_layout_grid_test.comp.spv.inc"
};
constexpr std::uint32_t group_size = 64;

// The push constants, samples and results of tests/interop/shader_layout_grid_test.comp.
struct LayoutGridPush {
    VkDeviceAddress directory = 0;
    VkDeviceAddress samples = 0;
    VkDeviceAddress addresses = 0;
    std::uint32_t sample_count = 0;
    std::uint32_t padding = 0;
};
struct GridSample {
    float u = 0;
    float v = 0;
    std::uint32_t texture = 0;  // the directory's id
    std::uint32_t mip = 0;
};
struct SampleAddress {
    float cx = 0;  // the continuous texel position in the level
    float cy = 0;
    std::uint32_t tile_x = 0;
    std::uint32_t tile_y = 0;
    std::uint32_t page = 0;  // global: the texture's base page included
    std::uint32_t tile_in_page = 0;
    std::uint32_t local_x = 0;  // the bilinear footprint's top-left texel in the tile
    std::uint32_t local_y = 0;
    float wrapped_u = 0;  // uv wrapped by the address modes (vt_wrap)
    float wrapped_v = 0;
    friend bool operator==(const SampleAddress&, const SampleAddress&) = default;
};
static_assert(sizeof(GridSample) == 16 && sizeof(SampleAddress) == 40, "the shader's std430");

struct Extent {
    std::uint32_t width = 1;
    std::uint32_t height = 1;
};
constexpr std::array<Extent, 6> grid_extents = {
    {{1, 1}, {1, 4099}, {3, 5}, {241, 481}, {5120, 2880}, {1u << 20, 17}}};
constexpr std::array<TileFormat, vt::tile_format_count> grid_formats = {
    TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3, TileFormat::bc4, TileFormat::bc5};

// Address modes of u and v besides clamp to edge on both, for a few extents and formats.
constexpr std::array<vt::TextureSampling, 4> wrapped_samplings = {
    {{AddressMode::repeat, AddressMode::repeat},
     {AddressMode::mirrored_repeat, AddressMode::mirrored_repeat},
     {AddressMode::repeat, AddressMode::mirrored_repeat},
     {AddressMode::clamp_to_edge, AddressMode::repeat}}};
constexpr std::array<Extent, 4> wrapped_extents = {{{1, 1}, {3, 5}, {241, 481}, {5120, 2880}}};

// One texture of the directory: every extent in every format (clamped), and the wrapped ones,
// each at a base page of its own.
struct GridTexture {
    vt::TextureLayout layout;
    std::uint32_t base_page = 0;
    vt::TextureSampling sampling;
};

std::vector<GridTexture> grid_textures() {
    std::vector<GridTexture> textures;
    std::uint32_t next_base_page = 5;  // not 0: the base page takes part in the global page
    const auto add = [&](Extent extent, TileFormat format, vt::TextureSampling sampling,
                         std::uint32_t tile_levels = 0) {
        const vt::TextureLayout layout(
            vt::TextureShape{extent.width, extent.height, format, {}, tile_levels});
        textures.push_back({layout, next_base_page, sampling});
        next_base_page += std::uint32_t(layout.page_count) + 3;
    };
    for (const Extent extent : grid_extents) {
        for (const TileFormat format : grid_formats) add(extent, format, {});
    }
    // Tile levels: the finest one, two, and more levels than are outside the tail.
    for (const std::uint32_t tile_levels : {1u, 2u, 30u}) {
        for (const Extent extent : grid_extents) {
            for (const TileFormat format : {TileFormat::rgba8, TileFormat::bc1}) {
                add(extent, format, {}, tile_levels);
            }
        }
    }
    for (const vt::TextureSampling sampling : wrapped_samplings) {
        for (const Extent extent : wrapped_extents) {
            for (const TileFormat format : {TileFormat::rgba8, TileFormat::bc1}) {
                add(extent, format, sampling);
            }
        }
    }
    return textures;
}

// The u (or v) values sampled on one axis of a level: a uniform grid from 0 to 1, the floats
// next to 0 (the smallest normal ones: a device may flush denormals to zero, as NVIDIA's do) and
// to 1, and around a few tile edges (the first, the first page edge, the last): the
// edge, the floats either side of it, and half a texel either side, where the footprint's
// corner moves into the tile's border.
std::vector<float> axis_samples(std::uint32_t level_size, std::uint32_t tiles,
                                std::uint32_t payload, std::uint32_t page_tiles, AddressMode mode) {
    std::vector<float> values;
    if (mode != AddressMode::clamp_to_edge) {
        // Far outside [0, 1], negative, exact integers, and within half a texel of a seam.
        const float half_texel = 0.5f / float(level_size);
        for (const float base : {0.0f, 0.25f, half_texel, 1.0f - half_texel, 0.5f * half_texel,
                                 -std::numeric_limits<float>::min(), std::nextafter(1.0f, 2.0f)}) {
            for (const float k : {-3.0f, -1.0f, 1.0f, 2.0f, 37.0f}) values.push_back(base + k);
            values.push_back(-base);
        }
        values.push_back(37.25f);
        values.push_back(-0.25f);
    }
    for (int i = 0; i <= 16; ++i) values.push_back(float(i) / 16.0f);
    values.push_back(std::numeric_limits<float>::min());
    values.push_back(std::nextafter(1.0f, 0.0f));
    for (const std::uint32_t edge_tile : {1u, page_tiles, tiles - 1}) {
        if (edge_tile == 0 || edge_tile >= tiles) continue;
        const double edge = double(edge_tile) * payload;
        const float at = float(edge / level_size);
        for (const float value :
             {at, std::nextafter(at, 0.0f), std::nextafter(at, 1.0f),
              float((edge - 0.5) / level_size), float((edge + 0.5) / level_size)}) {
            values.push_back(value);
        }
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

// Every level of every texture: the cross product of its two axes' samples.
std::vector<GridSample> grid_samples(std::span<const GridTexture> textures) {
    std::vector<GridSample> samples;
    for (std::uint32_t id = 0; id < textures.size(); ++id) {
        const vt::TextureLayout& layout = textures[id].layout;
        const vt::TileFormatInfo format = layout.tile_format();
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            const vt::MipLevel& level = layout.mips[mip];
            const vt::TextureSampling sampling = textures[id].sampling;
            const std::vector<float> us =
                axis_samples(level.width, level.tiles_x, format.tile_payload(), format.page_tiles_x,
                             sampling.address_u);
            const std::vector<float> vs =
                axis_samples(level.height, level.tiles_y, format.tile_payload(),
                             format.page_tiles_y, sampling.address_v);
            for (const float v : vs) {
                for (const float u : us) samples.push_back({u, v, id, mip});
            }
        }
    }
    return samples;
}

// clamp(uv * level, 0.5, level - 0.5) at a clamped edge, wrap_uv(uv) * level at a wrapped one
// (its clamp to [0, level] changes nothing here), in floats, as vt_level_position computes it.
float continuous_position(float uv, std::uint32_t level_size, AddressMode mode) {
    const float level = float(level_size);
    if (mode == AddressMode::clamp_to_edge) return std::clamp(uv * level, 0.5f, level - 0.5f);
    return std::clamp(vt::wrap_uv(uv, mode) * level, 0.0f, level);
}

// The level texel of the bilinear footprint's top-left corner: -1 half a texel before a wrapped
// edge.
std::int64_t footprint_corner(float c) { return std::int64_t(std::floor(c - 0.5f)); }

// The tile that holds c: the last one for c = the level's size (a wrapped edge).
std::uint32_t tile_of(float c, std::uint32_t level_size, std::uint32_t payload) {
    return std::min(std::uint32_t(std::floor(c)), level_size - 1) / payload;
}

// What the shader must find for a sample: the tile that holds the continuous position, where
// TextureLayout::locate puts that tile, and the footprint's corner in the tile's own texels
// (tile n's payload starts at level texel n * payload, after the border).
SampleAddress expected_address(const GridTexture& texture, const GridSample& sample) {
    const vt::TextureLayout& layout = texture.layout;
    const vt::MipLevel& level = layout.mips[sample.mip];
    const vt::TileFormatInfo format = layout.tile_format();
    const std::uint32_t payload = format.tile_payload();
    const vt::TextureSampling sampling = texture.sampling;
    SampleAddress expected;
    expected.cx = continuous_position(sample.u, level.width, sampling.address_u);
    expected.cy = continuous_position(sample.v, level.height, sampling.address_v);
    expected.tile_x = tile_of(expected.cx, level.width, payload);
    expected.tile_y = tile_of(expected.cy, level.height, payload);
    const vt::TileLocation location = layout.locate(sample.mip, expected.tile_x, expected.tile_y);
    expected.page = texture.base_page + std::uint32_t(location.page);
    expected.tile_in_page = location.tile_in_page;
    expected.local_x = std::uint32_t(footprint_corner(expected.cx) + format.tile_border -
                                     std::int64_t(expected.tile_x) * payload);
    expected.local_y = std::uint32_t(footprint_corner(expected.cy) + format.tile_border -
                                     std::int64_t(expected.tile_y) * payload);
    expected.wrapped_u = vt::wrap_uv(sample.u, sampling.address_u);
    expected.wrapped_v = vt::wrap_uv(sample.v, sampling.address_v);
    return expected;
}

std::string describe(const SampleAddress& address) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "c (%.9g, %.9g) tile (%u, %u) page %u slot %u local (%u, %u) wrapped (%.9g, "
                  "%.9g)",
                  double(address.cx), double(address.cy), address.tile_x, address.tile_y,
                  address.page, address.tile_in_page, address.local_x, address.local_y,
                  double(address.wrapped_u), double(address.wrapped_v));
    return text;
}

std::string describe(const GridTexture& texture, const GridSample& sample) {
    char text[160];
    std::snprintf(text, sizeof(text), "%u x %u %s %s/%s, mip %u, uv (%.9g, %.9g)",
                  texture.layout.width, texture.layout.height,
                  vt::tile_format_name(texture.layout.format),
                  vt::address_mode_name(texture.sampling.address_u).data(),
                  vt::address_mode_name(texture.sampling.address_v).data(), sample.mip,
                  double(sample.u), double(sample.v));
    return text;
}

// The shader's addresses of every sample, reading the directory as uploaded in the same
// submission.
std::vector<SampleAddress> address_on_device(VulkanContext& context,
                                             VulkanTextureDirectory& directory,
                                             std::span<const GridSample> samples) {
    const VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VulkanBuffer input(context, samples.size_bytes(), usage, BufferMemory::upload, "grid samples");
    std::memcpy(input.mapped(), samples.data(), samples.size_bytes());
    input.flush();
    const VkDeviceSize output_bytes = samples.size() * sizeof(SampleAddress);
    VulkanBuffer output(context, output_bytes, usage, BufferMemory::readback, "grid addresses");
    test::ComputeTestPipeline pipeline(context, shader_layout_grid_test_comp,
                                       sizeof(LayoutGridPush), group_size,
                                       "shader_layout_grid_test");
    const LayoutGridPush push{directory.device_address(), input.device_address(),
                              output.device_address(), std::uint32_t(samples.size())};
    context.run_commands([&](VkCommandBuffer commands) {
        directory.record_upload(commands);
        pipeline.record(commands, push, push.sample_count);
    });
    output.invalidate();
    std::vector<SampleAddress> addresses(samples.size());
    std::memcpy(addresses.data(), output.mapped(), output_bytes);
    return addresses;
}

// The expectation itself against what a tile's texels are (its border holding the texels the
// address mode wraps to past the level's edge, as vt::level_texel for clamp): the tile exists,
// the 2 x 2 footprint lies inside it and shows the corner texel and its neighbour as Vulkan
// wraps texel indices; and the grid reaches across tile and page edges and past wrapped edges.
TEST(ShaderLayoutGridExpectation, EveryFootprintLiesInItsTileAndShowsItsTexels) {
    const std::vector<GridTexture> textures = grid_textures();
    std::size_t into_left_border = 0;
    std::size_t in_later_pages = 0;
    std::size_t past_a_wrapped_edge = 0;
    for (const GridSample& sample : grid_samples(textures)) {
        const GridTexture& texture = textures[sample.texture];
        const vt::TextureLayout& layout = texture.layout;
        const vt::MipLevel& level = layout.mips[sample.mip];
        const vt::TileFormatInfo format = layout.tile_format();
        const SampleAddress expected = expected_address(texture, sample);
        ASSERT_TRUE(layout.has_tile(sample.mip, expected.tile_x, expected.tile_y))
            << describe(texture, sample);
        struct Axis {
            std::uint32_t tile, local;
            std::int64_t corner;
            std::uint32_t size;
            AddressMode mode;
        };
        for (const Axis& axis :
             {Axis{expected.tile_x, expected.local_x, footprint_corner(expected.cx), level.width,
                   texture.sampling.address_u},
              Axis{expected.tile_y, expected.local_y, footprint_corner(expected.cy), level.height,
                   texture.sampling.address_v}}) {
            const auto shows = [&](std::uint32_t local) {
                return test::vulkan_wrap_texel(
                    std::int64_t(axis.tile) * format.tile_payload() + local - format.tile_border,
                    axis.size, axis.mode);
            };
            ASSERT_LT(axis.local + 1, format.tile_size) << describe(texture, sample);
            if (axis.mode == AddressMode::clamp_to_edge) {
                ASSERT_EQ(shows(axis.local),
                          vt::level_texel(axis.tile, axis.local, axis.size, format.tile_payload(),
                                          format.tile_border));
            }
            ASSERT_EQ(shows(axis.local), test::vulkan_wrap_texel(axis.corner, axis.size, axis.mode))
                << describe(texture, sample);
            ASSERT_EQ(shows(axis.local + 1),
                      test::vulkan_wrap_texel(axis.corner + 1, axis.size, axis.mode))
                << describe(texture, sample);
            past_a_wrapped_edge += axis.mode != AddressMode::clamp_to_edge &&
                                   (axis.corner < 0 || axis.corner + 1 >= axis.size);
        }
        into_left_border += expected.local_x < format.tile_border;
        in_later_pages += expected.page != texture.base_page + level.first_page;
    }
    EXPECT_GT(into_left_border, 0u);
    EXPECT_GT(in_later_pages, 0u);
    EXPECT_GT(past_a_wrapped_edge, 0u);
}

// The wrap of texture_sampling.hpp agrees with Vulkan's texel wrapping: a texel's centre wrapped
// as a uv lands in the texel that test::vulkan_wrap_texel names, and so does the library's
// vt::address_texel (the baker's borders), for texels far either side of the texture.
TEST(ShaderLayoutGridExpectation, WrappedUvAndWrappedTexelAgree) {
    for (const AddressMode mode :
         {AddressMode::repeat, AddressMode::mirrored_repeat, AddressMode::clamp_to_edge}) {
        for (const std::uint32_t size : {1u, 2u, 3u, 8u, 241u}) {
            for (std::int64_t texel = -5 * std::int64_t(size) - 3;
                 texel < 5 * std::int64_t(size) + 3; ++texel) {
                const float uv = (float(texel) + 0.5f) / float(size);
                const float wrapped = vt::wrap_uv(uv, mode) * float(size);
                const std::uint32_t from_uv =
                    mode == AddressMode::clamp_to_edge
                        ? std::uint32_t(std::clamp(std::floor(wrapped), 0.0f, float(size - 1)))
                        : std::uint32_t(std::floor(wrapped));
                ASSERT_EQ(from_uv, test::vulkan_wrap_texel(texel, size, mode))
                    << vt::address_mode_name(mode) << " size " << size << " texel " << texel;
                ASSERT_EQ(vt::address_texel(mode, texel, size), from_uv)
                    << vt::address_mode_name(mode) << " size " << size << " texel " << texel;
            }
        }
    }
    // Fixed points: 37.25 is 0.25; mirrored repeat reflects odd periods.
    EXPECT_EQ(vt::wrap_uv(37.25f, AddressMode::repeat), 0.25f);
    EXPECT_EQ(vt::wrap_uv(-0.25f, AddressMode::repeat), 0.75f);
    EXPECT_EQ(vt::wrap_uv(1.0f, AddressMode::repeat), 0.0f);
    EXPECT_EQ(vt::wrap_uv(1.25f, AddressMode::mirrored_repeat), 0.75f);
    EXPECT_EQ(vt::wrap_uv(-0.25f, AddressMode::mirrored_repeat), 0.25f);
    EXPECT_EQ(vt::wrap_uv(37.25f, AddressMode::mirrored_repeat), 0.75f);
    EXPECT_EQ(vt::wrap_uv(-3.0f, AddressMode::clamp_to_edge), -3.0f);
    static_assert(test::vulkan_wrap_texel(-1, 4, AddressMode::repeat) == 3);
    static_assert(test::vulkan_wrap_texel(-1, 4, AddressMode::mirrored_repeat) == 0);
    static_assert(test::vulkan_wrap_texel(4, 4, AddressMode::mirrored_repeat) == 3);
    static_assert(test::vulkan_wrap_texel(9, 4, AddressMode::clamp_to_edge) == 3);
}

using ShaderLayoutGrid = test::HostVulkanTest;

TEST_F(ShaderLayoutGrid, EverySampleOfEveryLevelIsAddressedAsTextureLayoutSays) {
    const std::vector<GridTexture> textures = grid_textures();
    VulkanTextureDirectory directory(*context_, {.max_textures = std::uint32_t(textures.size())});
    for (std::uint32_t id = 0; id < textures.size(); ++id) {
        directory.set(id, textures[id].base_page, textures[id].layout.shape(),
                      textures[id].sampling);
    }
    const std::vector<GridSample> samples = grid_samples(textures);
    const std::vector<SampleAddress> found = address_on_device(*context_, directory, samples);

    constexpr std::size_t printed_at_most = 20;
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const GridTexture& texture = textures[samples[i].texture];
        const SampleAddress expected = expected_address(texture, samples[i]);
        if (found[i] == expected) continue;
        if (++mismatches > printed_at_most) continue;
        ADD_FAILURE() << describe(texture, samples[i]) << "\n  shader: " << describe(found[i])
                      << "\n  layout: " << describe(expected);
    }
    std::printf("%zu samples of %zu textures: %zu differ from the layout\n", samples.size(),
                textures.size(), mismatches);
    EXPECT_EQ(mismatches, 0u) << "of " << samples.size() << " samples (the first "
                              << printed_at_most << " are printed)";
}

// sRGB is for the formats that have an sRGB variant (not BC4 and BC5), and only known modes.
TEST_F(ShaderLayoutGrid, SamplingTheShadersDoNotKnowIsRefused) {
    VulkanTextureDirectory directory(*context_, {.max_textures = 2});
    const vt::TextureSampling srgb{.color_space = vt::ColorSpace::srgb};
    EXPECT_EQ(test::error_code_of([&] {
                  directory.set(0, 0, {64, 64, TileFormat::bc4}, srgb);
              }),
              Errc::invalid_argument);
    EXPECT_EQ(test::error_code_of([&] {
                  directory.set(0, 0, {64, 64, TileFormat::rgba8},
                                {.address_u = AddressMode(vt::address_mode_count)});
              }),
              Errc::invalid_argument);
    directory.set(1, 0, {64, 64, TileFormat::bc1}, srgb);
    EXPECT_EQ(directory.get(1).color_space, std::uint32_t(vt::ColorSpace::srgb));
    EXPECT_EQ(directory.get(0).width, 0u) << "a refused entry is left as it was";
}

// VulkanComputePipeline (under the test's pipeline) refuses push constants of another size
// than the shader's before recording anything.
TEST_F(ShaderLayoutGrid, PushConstantsOfAnotherSizeAreRefused) {
    test::ComputeTestPipeline pipeline(*context_, shader_layout_grid_test_comp,
                                       sizeof(LayoutGridPush), group_size,
                                       "shader_layout_grid_test");
    const std::uint32_t too_short[2] = {};
    Errc code = Errc::backend_failure;
    context_->run_commands([&](VkCommandBuffer commands) {
        code = test::error_code_of([&] { pipeline.record(commands, too_short, 1); });
    });
    EXPECT_EQ(code, Errc::invalid_argument);
}

}  // namespace
}  // namespace vtpage
