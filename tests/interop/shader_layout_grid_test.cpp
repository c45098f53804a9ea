// shaders/vtpage/virtual_texture.glsl's addressing against TextureLayout, on lavapipe (or any
// Vulkan device). Textures of shapes that are neither square nor powers of two, in every tile
// format, are described by VulkanTextureDirectory; a compute shader addresses a grid of uv
// samples at every mip level with the library's own functions (vt_level_position, vt_tile_page,
// vt_bilinear_footprint), and every sample must find the position, tile, page, slot and texel
// in the tile that TextureLayout gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "compute_test_pipeline.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

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
    friend bool operator==(const SampleAddress&, const SampleAddress&) = default;
};
static_assert(sizeof(GridSample) == 16 && sizeof(SampleAddress) == 32, "the shader's std430");

struct Extent {
    std::uint32_t width = 1;
    std::uint32_t height = 1;
};
constexpr std::array<Extent, 6> grid_extents = {
    {{1, 1}, {1, 4099}, {3, 5}, {241, 481}, {5120, 2880}, {1u << 20, 17}}};
constexpr std::array<TileFormat, vt::tile_format_count> grid_formats = {
    TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3, TileFormat::bc4, TileFormat::bc5};

// One texture of the directory: every extent in every format, each at a base page of its own.
struct GridTexture {
    vt::TextureLayout layout;
    std::uint32_t base_page = 0;
};

std::vector<GridTexture> grid_textures() {
    std::vector<GridTexture> textures;
    std::uint32_t next_base_page = 5;  // not 0: the base page takes part in the global page
    for (const Extent extent : grid_extents) {
        for (const TileFormat format : grid_formats) {
            const vt::TextureLayout layout(extent.width, extent.height, format);
            textures.push_back({layout, next_base_page});
            next_base_page += std::uint32_t(layout.page_count) + 3;
        }
    }
    return textures;
}

// The u (or v) values sampled on one axis of a level: a uniform grid from 0 to 1, the floats
// next to 0 and 1, and around a few tile edges (the first, the first page edge, the last): the
// edge, the floats either side of it, and half a texel either side, where the footprint's
// corner moves into the tile's border.
std::vector<float> axis_samples(std::uint32_t level_size, std::uint32_t tiles,
                                std::uint32_t payload, std::uint32_t page_tiles) {
    std::vector<float> values;
    for (int i = 0; i <= 16; ++i) values.push_back(float(i) / 16.0f);
    values.push_back(std::nextafter(0.0f, 1.0f));
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
            const std::vector<float> us = axis_samples(level.width, level.tiles_x,
                                                       format.tile_payload(), format.page_tiles_x);
            const std::vector<float> vs = axis_samples(level.height, level.tiles_y,
                                                       format.tile_payload(), format.page_tiles_y);
            for (const float v : vs) {
                for (const float u : us) samples.push_back({u, v, id, mip});
            }
        }
    }
    return samples;
}

// clamp(uv * level, 0.5, level - 0.5) in floats, as vt_level_position computes it.
float continuous_position(float uv, std::uint32_t level_size) {
    const float level = float(level_size);
    return std::clamp(uv * level, 0.5f, level - 0.5f);
}

// The level texel of the bilinear footprint's top-left corner.
std::uint32_t footprint_corner(float c) { return std::uint32_t(std::floor(c - 0.5f)); }

// What the shader must find for a sample: the tile that holds the continuous position, where
// TextureLayout::locate puts that tile, and the footprint's corner in the tile's own texels
// (tile n's payload starts at level texel n * payload, after the border).
SampleAddress expected_address(const GridTexture& texture, const GridSample& sample) {
    const vt::TextureLayout& layout = texture.layout;
    const vt::MipLevel& level = layout.mips[sample.mip];
    const vt::TileFormatInfo format = layout.tile_format();
    const std::uint32_t payload = format.tile_payload();
    SampleAddress expected;
    expected.cx = continuous_position(sample.u, level.width);
    expected.cy = continuous_position(sample.v, level.height);
    expected.tile_x = std::uint32_t(std::floor(expected.cx)) / payload;
    expected.tile_y = std::uint32_t(std::floor(expected.cy)) / payload;
    const vt::TileLocation location = layout.locate(sample.mip, expected.tile_x, expected.tile_y);
    expected.page = texture.base_page + std::uint32_t(location.page);
    expected.tile_in_page = location.tile_in_page;
    expected.local_x =
        footprint_corner(expected.cx) + format.tile_border - expected.tile_x * payload;
    expected.local_y =
        footprint_corner(expected.cy) + format.tile_border - expected.tile_y * payload;
    return expected;
}

std::string describe(const SampleAddress& address) {
    char text[160];
    std::snprintf(text, sizeof(text), "c (%.9g, %.9g) tile (%u, %u) page %u slot %u local (%u, %u)",
                  double(address.cx), double(address.cy), address.tile_x, address.tile_y,
                  address.page, address.tile_in_page, address.local_x, address.local_y);
    return text;
}

std::string describe(const GridTexture& texture, const GridSample& sample) {
    char text[160];
    std::snprintf(text, sizeof(text), "%u x %u %s, mip %u, uv (%.9g, %.9g)", texture.layout.width,
                  texture.layout.height, vt::tile_format_name(texture.layout.format), sample.mip,
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

// The expectation itself against the layout's definition of a tile's texels (level_texel): the
// tile exists, the 2 x 2 footprint lies inside it and shows the corner texel and its neighbour
// (clamped at the level's edge); and the grid reaches across tile and page edges.
TEST(ShaderLayoutGridExpectation, EveryFootprintLiesInItsTileAndShowsItsTexels) {
    const std::vector<GridTexture> textures = grid_textures();
    std::size_t into_left_border = 0;
    std::size_t in_later_pages = 0;
    for (const GridSample& sample : grid_samples(textures)) {
        const GridTexture& texture = textures[sample.texture];
        const vt::TextureLayout& layout = texture.layout;
        const vt::MipLevel& level = layout.mips[sample.mip];
        const vt::TileFormatInfo format = layout.tile_format();
        const SampleAddress expected = expected_address(texture, sample);
        ASSERT_TRUE(layout.has_tile(sample.mip, expected.tile_x, expected.tile_y))
            << describe(texture, sample);
        const auto shows = [&](std::uint32_t tile, std::uint32_t local, std::uint32_t size) {
            return vt::level_texel(tile, local, size, format.tile_payload(), format.tile_border);
        };
        for (const auto& [tile, local, c, size] :
             {std::array{expected.tile_x, expected.local_x, footprint_corner(expected.cx),
                         level.width},
              std::array{expected.tile_y, expected.local_y, footprint_corner(expected.cy),
                         level.height}}) {
            ASSERT_LT(local + 1, format.tile_size) << describe(texture, sample);
            ASSERT_EQ(shows(tile, local, size), c) << describe(texture, sample);
            ASSERT_EQ(shows(tile, local + 1, size), std::min(c + 1, size - 1))
                << describe(texture, sample);
        }
        into_left_border += expected.local_x < format.tile_border;
        in_later_pages += expected.page != texture.base_page + level.first_page;
    }
    EXPECT_GT(into_left_border, 0u);
    EXPECT_GT(in_later_pages, 0u);
}

using ShaderLayoutGrid = test::HostVulkanTest;

TEST_F(ShaderLayoutGrid, EverySampleOfEveryLevelIsAddressedAsTextureLayoutSays) {
    const std::vector<GridTexture> textures = grid_textures();
    VulkanTextureDirectory directory(*context_, {.max_textures = std::uint32_t(textures.size())});
    for (std::uint32_t id = 0; id < textures.size(); ++id) {
        directory.set(id, textures[id].base_page, textures[id].layout.shape());
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
