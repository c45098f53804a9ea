// shaders/vtpage/block_decode.glsl against libsquish's decoder, texel by texel, on lavapipe (or
// any Vulkan device): random blocks, which reach every palette mode, and blocks libsquish encoded
// from images. A decoder given swapped endpoints must fail the same comparison.
#include <gtest/gtest.h>

#include <squish.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../interop/compute_test_pipeline.hpp"
#include "../interop/vulkan_test_support.hpp"
#include "block_codec.hpp"
#include "test_images.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"

namespace vtpage {
namespace {

using vt::TileFormat;

constexpr std::uint32_t block_decode_test_comp[] = {
#include "block_decode_test.comp.spv.inc"
};

// The push constants of tests/bake/block_decode_test.comp.
struct BlockDecodePush {
    VkDeviceAddress blocks = 0;
    VkDeviceAddress texels = 0;
    std::uint32_t format = 0;
    std::uint32_t block_count = 0;
};

constexpr std::uint32_t group_size = 64;

// The test shader's pipeline: decodes blocks of one format into 16 RGBA floats each.
class GpuBlockDecoder {
public:
    explicit GpuBlockDecoder(VulkanContext& context)
        : context_(context),
          pipeline_(context, block_decode_test_comp, sizeof(BlockDecodePush), group_size,
                    "block_decode_test") {}

    // RGBA of every texel of every block, 16 texels a block, row by row.
    std::vector<float> decode(TileFormat format, std::span<const std::byte> blocks) {
        const std::uint32_t block_bytes = vt::tile_format_info(format).block_bytes;
        const auto block_count = std::uint32_t(blocks.size() / block_bytes);
        const VkBufferUsageFlags usage =
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
        VulkanBuffer input(context_, blocks.size(), usage, BufferMemory::upload, "test blocks");
        std::memcpy(input.mapped(), blocks.data(), blocks.size());
        input.flush();
        const VkDeviceSize output_bytes = VkDeviceSize(block_count) * 16 * 4 * sizeof(float);
        VulkanBuffer output(context_, output_bytes, usage, BufferMemory::readback,
                            "test decoded texels");
        const BlockDecodePush push{input.device_address(), output.device_address(),
                                   static_cast<std::uint32_t>(format), block_count};
        pipeline_.run(push, block_count * 16);
        output.invalidate();
        std::vector<float> texels(std::size_t(block_count) * 16 * 4);
        std::memcpy(texels.data(), output.mapped(), output_bytes);
        return texels;
    }

private:
    VulkanContext& context_;
    test::ComputeTestPipeline pipeline_;
};

// libsquish 1.15 decodes kBc4 and kBc5 as BC1; a BC4 block is BC3's alpha block, so its BC3
// decoder reads one: the alpha of the result.
void squish_decode_level_block(const std::byte* level_block, std::uint8_t* rgba, int channel) {
    std::array<std::byte, 16> bc3_block{};
    std::memcpy(bc3_block.data(), level_block, 8);
    std::array<std::uint8_t, 64> decoded{};
    squish::Decompress(decoded.data(), bc3_block.data(), squish::kDxt5);
    for (int i = 0; i < 16; ++i) rgba[i * 4 + channel] = decoded[i * 4 + 3];
}

// libsquish's decoding of the blocks, in the shader's conventions: BC1 as RGBA (alpha 0 for
// transparent black), BC4 as (r, 0, 0, 255), BC5 as (r, g, 0, 255).
std::vector<std::uint8_t> squish_decode(TileFormat format, std::span<const std::byte> blocks) {
    const std::uint32_t block_bytes = vt::tile_format_info(format).block_bytes;
    const std::size_t block_count = blocks.size() / block_bytes;
    std::vector<std::uint8_t> rgba(block_count * 64);
    for (std::size_t block = 0; block < block_count; ++block) {
        const std::byte* bytes = &blocks[block * block_bytes];
        std::uint8_t* texels = &rgba[block * 64];
        switch (format) {
            case TileFormat::bc1:
                squish::Decompress(texels, bytes, squish::kDxt1);
                break;
            case TileFormat::bc3:
                squish::Decompress(texels, bytes, squish::kDxt5);
                break;
            default:
                for (int i = 0; i < 16; ++i) {
                    texels[i * 4 + 1] = 0;
                    texels[i * 4 + 2] = 0;
                    texels[i * 4 + 3] = 255;
                }
                squish_decode_level_block(bytes, texels, 0);
                if (format == TileFormat::bc5) squish_decode_level_block(bytes + 8, texels, 1);
        }
    }
    return rgba;
}

// The largest difference between the shader's texels and libsquish's, in 1/255 steps.
double max_difference(std::span<const float> shader, std::span<const std::uint8_t> reference) {
    double largest = 0;
    for (std::size_t i = 0; i < reference.size(); ++i) {
        const double difference = std::fabs(double(shader[i]) * 255.0 - double(reference[i]));
        largest = std::max(largest, std::isnan(difference) ? INFINITY : difference);
    }
    return largest;
}

std::vector<std::byte> random_blocks(TileFormat format, std::uint32_t count, std::uint32_t seed) {
    std::vector<std::byte> blocks(std::size_t(count) * vt::tile_format_info(format).block_bytes);
    std::mt19937 random(seed);
    for (std::byte& byte : blocks) byte = std::byte(random() >> 24);
    // Equal endpoints too: colour 0 == colour 1 is BC1's 3-colour palette, level 0 == level 1
    // BC4's 6-level one.
    const std::uint32_t block_bytes = vt::tile_format_info(format).block_bytes;
    for (std::uint32_t block = 0; block < count; block += 16) {
        std::byte* bytes = &blocks[std::size_t(block) * block_bytes];
        const std::size_t colour = format == TileFormat::bc3 ? 8 : 0;
        if (format == TileFormat::bc1 || format == TileFormat::bc3) {
            std::memcpy(bytes + colour + 2, bytes + colour, 2);
        }
        if (format != TileFormat::bc1) bytes[1] = bytes[0];
    }
    return blocks;
}

// Tiles libsquish encoded from a gradient, a photo-like image and noise, end to end.
std::vector<std::byte> encoded_blocks(TileFormat format) {
    const vt::TileFormatInfo info = vt::tile_format_info(format);
    std::vector<std::byte> blocks;
    for (const test::TestImage& image :
         {test::gradient_image(info.tile_size), test::photo_like_image(info.tile_size, 21),
          test::noise_image(info.tile_size, 22)}) {
        std::vector<std::byte> tile(info.tile_bytes());
        bake::encode_tile(format, image.rgba, tile);
        blocks.insert(blocks.end(), tile.begin(), tile.end());
    }
    return blocks;
}

// Swaps each block's first pair of endpoints: BC1's colours, BC3's alpha levels, BC4's and
// BC5's red levels.
std::vector<std::byte> with_swapped_endpoints(TileFormat format, std::vector<std::byte> blocks) {
    const std::uint32_t block_bytes = vt::tile_format_info(format).block_bytes;
    for (std::size_t offset = 0; offset < blocks.size(); offset += block_bytes) {
        if (format == TileFormat::bc1) {
            std::swap_ranges(&blocks[offset], &blocks[offset + 2], &blocks[offset + 2]);
        } else {
            std::swap(blocks[offset], blocks[offset + 1]);
        }
    }
    return blocks;
}

constexpr std::array<TileFormat, 4> compressed_formats = {TileFormat::bc1, TileFormat::bc3,
                                                          TileFormat::bc4, TileFormat::bc5};

class BlockDecodeShader : public test::HostVulkanTest {
protected:
    void SetUp() override {
        HostVulkanTest::SetUp();
        if (IsSkipped()) return;
        decoder_ = std::make_unique<GpuBlockDecoder>(*context_);
    }
    void TearDown() override {
        decoder_.reset();
        HostVulkanTest::TearDown();
    }

    std::unique_ptr<GpuBlockDecoder> decoder_;
};

TEST_F(BlockDecodeShader, RandomBlocksDecodeAsLibsquishDecodesThem) {
    for (TileFormat format : compressed_formats) {
        SCOPED_TRACE(vt::tile_format_name(format));
        const std::vector<std::byte> blocks = random_blocks(format, 8192, 100 + unsigned(format));
        // Both palettes of the first endpoint pair are reached: 4 colours or 8 levels where
        // endpoint 0 is the greater, 3 colours or 6 levels otherwise.
        const std::uint32_t block_bytes = vt::tile_format_info(format).block_bytes;
        std::size_t first_greater = 0;
        for (std::size_t offset = 0; offset < blocks.size(); offset += block_bytes) {
            const auto byte = [&](std::size_t i) { return unsigned(blocks[offset + i]); };
            first_greater += format == TileFormat::bc1
                                 ? (byte(0) | byte(1) << 8) > (byte(2) | byte(3) << 8)
                                 : byte(0) > byte(1);
        }
        EXPECT_GT(first_greater, 1000u);
        EXPECT_LT(first_greater, 8192u - 1000u);
        const double difference =
            max_difference(decoder_->decode(format, blocks), squish_decode(format, blocks));
        std::printf("%s random blocks: max difference %.3f / 255\n", vt::tile_format_name(format),
                    difference);
        EXPECT_LE(difference, 1.0);
    }
}

TEST_F(BlockDecodeShader, EncodedImagesDecodeAsLibsquishDecodesThem) {
    for (TileFormat format : compressed_formats) {
        SCOPED_TRACE(vt::tile_format_name(format));
        const std::vector<std::byte> blocks = encoded_blocks(format);
        const double difference =
            max_difference(decoder_->decode(format, blocks), squish_decode(format, blocks));
        std::printf("%s encoded images: max difference %.3f / 255\n", vt::tile_format_name(format),
                    difference);
        EXPECT_LE(difference, 1.0);
    }
}

// The comparison can fail: blocks whose endpoints were swapped, decoded by the shader, are far
// from libsquish's decoding of the blocks as they were.
TEST_F(BlockDecodeShader, SwappedEndpointsAreCaughtByTheComparison) {
    for (TileFormat format : compressed_formats) {
        SCOPED_TRACE(vt::tile_format_name(format));
        const std::vector<std::byte> blocks = encoded_blocks(format);
        const std::vector<std::byte> swapped = with_swapped_endpoints(format, blocks);
        const double difference =
            max_difference(decoder_->decode(format, swapped), squish_decode(format, blocks));
        std::printf("%s swapped endpoints: max difference %.3f / 255\n",
                    vt::tile_format_name(format), difference);
        EXPECT_GT(difference, 32.0);
    }
}

}  // namespace
}  // namespace vtpage
