// The device BC3 encoder (streaming/sources/bc3_encoder.hpp), decoded by libsquish as DXT5: its
// colour is the BC1 encoder's, decoding to the same RGB; its alpha is within half a palette step
// of each texel's (exact for blocks of one or two alphas) and close to libsquish's own alpha
// encoding in PSNR; colour 0 > colour 1 in every block; the same bytes from C++17 and C++20.
#include "streaming/sources/bc3_encoder.hpp"

#include <gtest/gtest.h>

#include <squish.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "bc3_encoder_cxx17.hpp"
#include "block_codec.hpp"
#include "test_images.hpp"

namespace vtpage {
namespace {

using vt::Bc3Block;
using vt::TileFormat;

constexpr vt::TileFormatInfo bc3_info = vt::tile_format_info(TileFormat::bc3);
constexpr std::uint32_t bc3_tile = bc3_info.tile_size;
constexpr std::uint32_t bc3_blocks = bc3_info.blocks_per_row();

using Texels = std::array<std::uint8_t, 64>;  // a packed 4 x 4 block of RGBA8

// The image's tile encoded block by block with `encode` (the row pitch of a tile).
template <typename Encode>
std::vector<std::byte> encoded_tile(const test::TestImage& image, std::uint32_t block_bytes,
                                    Encode encode) {
    std::vector<std::byte> tile(std::size_t(bc3_blocks) * bc3_blocks * block_bytes);
    for (std::uint32_t by = 0; by < bc3_blocks; ++by) {
        for (std::uint32_t bx = 0; bx < bc3_blocks; ++bx) {
            const std::uint8_t* first = &image.rgba[(std::size_t(by) * 4 * bc3_tile + bx * 4) * 4];
            encode(first, bc3_tile * 4,
                   reinterpret_cast<std::uint8_t*>(&tile[(by * bc3_blocks + bx) * block_bytes]));
        }
    }
    return tile;
}

std::vector<std::byte> device_bc3_tile(const test::TestImage& image) {
    return encoded_tile(image, 16,
                        [](const std::uint8_t* texels, std::uint32_t pitch, std::uint8_t* out) {
                            vt::encode_bc3_block(texels, pitch, out);
                        });
}

std::vector<std::uint8_t> decoded(TileFormat format, std::span<const std::byte> tile) {
    std::vector<std::uint8_t> rgba(std::size_t(bc3_tile) * bc3_tile * 4);
    bake::decode_tile(format, tile, rgba);
    return rgba;
}

// Smooth, photograph-like and noise, each with an alpha channel of its kind.
std::vector<test::TestImage> images() {
    return {test::gradient_image(bc3_tile), test::photo_like_image(bc3_tile, 21),
            test::noise_image(bc3_tile, 22)};
}

int colour0(const std::uint8_t* colour_block) { return colour_block[0] | colour_block[1] << 8; }
int colour1(const std::uint8_t* colour_block) { return colour_block[2] | colour_block[3] << 8; }

// Constant evaluation works: opaque white is a constant alpha block and BC1's white.
constexpr Texels white_texels = [] {
    Texels texels{};
    texels.fill(255);
    return texels;
}();
constexpr Bc3Block white_block = vt::encode_bc3_block(white_texels.data());
constexpr vt::Bc1Block white_bc1 = vt::encode_bc1_block(white_texels.data());
static_assert(white_block.bytes[0] == 255 && white_block.bytes[1] == 255 &&
              white_block.bytes[2] == 0 && white_block.bytes[7] == 0 &&
              white_block.bytes[8] == white_bc1.bytes[0] &&
              white_block.bytes[10] == white_bc1.bytes[2] &&
              white_block.bytes[15] == white_bc1.bytes[7]);

// Worked out by hand: alpha 0 in the top row, 255 below, is endpoints 255 and 0, code 1 for the
// top row and 0 for the rest: bits 0..11 set to 001 001 001 001.
TEST(Bc3Encoder, TwoAlphasGiveTheHandCheckedAlphaBlock) {
    Texels texels{};
    for (int i = 0; i < 16; ++i) texels[i * 4 + 3] = i < 4 ? 0 : 255;
    const Bc3Block block = vt::encode_bc3_block(texels.data());
    const std::array<std::uint8_t, 8> expected = {255, 0, 0x49, 0x02, 0, 0, 0, 0};
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), block.bytes));
}

// The colour block is the BC1 encoder's, so BC3 decodes to the RGB that BC1 decodes to (BC1's
// error exactly) on every image.
TEST(Bc3Encoder, ColourDecodesAsTheBc1EncodersDoes) {
    for (const test::TestImage& image : images()) {
        const auto bc3 = decoded(TileFormat::bc3, device_bc3_tile(image));
        const auto bc1 = decoded(
            TileFormat::bc1,
            encoded_tile(image, 8,
                         [](const std::uint8_t* texels, std::uint32_t pitch, std::uint8_t* out) {
                             vt::encode_bc1_block(texels, pitch, out);
                         }));
        const double bc3_psnr = test::psnr(image.rgba, bc3, 0b0111);
        EXPECT_EQ(bc3_psnr, test::psnr(image.rgba, bc1, 0b0111));
        EXPECT_GT(bc3_psnr, 12.0);  // noise's is the lowest, about 13 dB
        for (std::size_t i = 0; i < bc3.size(); ++i) {
            if (i % 4 == 3) continue;  // BC1 decodes alpha as 255
            ASSERT_EQ(bc3[i], bc1[i]) << "byte " << i;
        }
    }
}

// Each texel's alpha is within half a step of the 8-level palette (a seventh of the block's
// alpha range), plus 1 for libsquish truncating the interpolated levels.
TEST(Bc3Encoder, AlphaIsWithinHalfAPaletteStep) {
    std::mt19937 random(5);
    std::size_t exact_blocks = 0;
    for (int n = 0; n < 20000; ++n) {
        Texels texels{};
        // Random blocks of random alpha ranges: from one alpha to the whole 0..255.
        const int low = int(random() % 256);
        const int range = int(random() % (256 - low));
        for (int i = 0; i < 16; ++i) {
            texels[i * 4 + 3] = std::uint8_t(low + (range ? int(random() % (range + 1)) : 0));
        }
        int block_low = 255, block_high = 0;
        for (int i = 0; i < 16; ++i) {
            block_low = std::min(block_low, int(texels[i * 4 + 3]));
            block_high = std::max(block_high, int(texels[i * 4 + 3]));
        }
        const Bc3Block block = vt::encode_bc3_block(texels.data());
        Texels out{};
        squish::Decompress(out.data(), block.bytes, squish::kDxt5);
        int largest = 0;
        for (int i = 0; i < 16; ++i) {
            largest = std::max(largest, std::abs(int(out[i * 4 + 3]) - int(texels[i * 4 + 3])));
        }
        const double half_step = double(block_high - block_low) / 14.0;
        ASSERT_LE(largest, half_step + 1.0)
            << "block " << n << ": alpha " << block_low << ".." << block_high;
        if (block_high == block_low) {
            ASSERT_EQ(largest, 0) << "one alpha decodes exactly";
            ++exact_blocks;
        }
    }
    EXPECT_GT(exact_blocks, 0u);
}

// The alpha of whole images, against libsquish's alpha encoding, which searches both palettes
// and their endpoints. Measured (device encoder / libsquish, dB): gradient 53.18 / lossless,
// photo-like 45.55 / 46.07, noise 29.29 / 29.33. The gradient's blocks span a few alphas, which
// the device encoder's levels hit exactly, but libsquish's decoder truncates the interpolated
// levels (the shader does not), and that costs it the odd 1.
TEST(Bc3Encoder, AlphaPsnrIsCloseToLibsquish) {
    for (const test::TestImage& image : images()) {
        std::vector<std::byte> squish_tile(bc3_info.tile_bytes());
        bake::encode_tile(TileFormat::bc3, image.rgba, squish_tile, bake::EncodeQuality::good);
        const double squish = test::psnr(image.rgba, decoded(TileFormat::bc3, squish_tile), 0b1000);
        const double device =
            test::psnr(image.rgba, decoded(TileFormat::bc3, device_bc3_tile(image)), 0b1000);
        std::printf("alpha: device encoder %.2f dB, libsquish %.2f dB\n", device, squish);
        EXPECT_GE(device, std::min(squish, 50.0) - 0.7);
    }
}

// Colour 0 > colour 1 in every block (or equal, every index 0), on the images and on blocks of
// two near colours, where rounding can make the ends meet.
TEST(Bc3Encoder, ColourZeroIsAboveColourOneInEveryBlock) {
    std::vector<test::TestImage> all = images();
    test::TestImage pairs{bc3_tile, bc3_tile, std::vector<std::uint8_t>(bc3_tile * bc3_tile * 4)};
    std::mt19937 random(7);
    for (std::size_t texel = 0; texel < std::size_t(bc3_tile) * bc3_tile; ++texel) {
        const std::uint32_t bits = random();
        for (int c = 0; c < 4; ++c) {
            pairs.rgba[texel * 4 + c] =
                std::uint8_t(((bits >> (8 * c)) & 0xf8) | ((bits >> 24) & 7));
        }
    }
    all.push_back(pairs);
    for (const test::TestImage& image : all) {
        const std::vector<std::byte> tile = device_bc3_tile(image);
        for (std::size_t offset = 0; offset < tile.size(); offset += 16) {
            const auto* colour = reinterpret_cast<const std::uint8_t*>(&tile[offset + 8]);
            if (colour0(colour) == colour1(colour)) {
                for (int i = 4; i < 8; ++i) ASSERT_EQ(colour[i], 0) << "block " << offset / 16;
            } else {
                ASSERT_GT(colour0(colour), colour1(colour)) << "block " << offset / 16;
            }
        }
    }
}

// Blocks in the other order, or with equal endpoints, are put in order without changing what
// they decode to.
TEST(Bc3Encoder, OrderingTheEndpointsKeepsTheDecodedColours) {
    std::mt19937 random(9);
    std::size_t swapped = 0, equal = 0;
    for (int n = 0; n < 5000; ++n) {
        std::array<std::uint8_t, 16> block{};
        for (std::uint8_t& byte : block) byte = std::uint8_t(random() >> 24);
        if (n % 4 == 0) {  // equal endpoints
            block[10] = block[8];
            block[11] = block[9];
        }
        const bool in_order = colour0(&block[8]) > colour1(&block[8]);
        std::array<std::uint8_t, 16> ordered = block;
        vt::bc3_detail::order_four_colour_endpoints(&ordered[8]);
        Texels before{}, after{};
        squish::Decompress(before.data(), block.data(), squish::kDxt5);
        squish::Decompress(after.data(), ordered.data(), squish::kDxt5);
        ASSERT_EQ(before, after) << "block " << n;
        if (in_order) {
            ASSERT_EQ(block, ordered) << "block " << n << " was in order already";
            continue;
        }
        if (colour0(&ordered[8]) == colour1(&ordered[8])) {
            ++equal;
            for (int i = 12; i < 16; ++i) ASSERT_EQ(ordered[i], 0) << "block " << n;
        } else {
            ++swapped;
            ASSERT_GT(colour0(&ordered[8]), colour1(&ordered[8])) << "block " << n;
        }
    }
    EXPECT_GT(swapped, 1000u);
    EXPECT_GT(equal, 1000u);
}

TEST(Bc3Encoder, Cxx17AndCxx20BuildsGiveTheSameBytes) {
    const test::TestImage image = test::noise_image(bc3_tile, 23);
    const std::vector<std::byte> cxx17 = encoded_tile(
        image, 16, [](const std::uint8_t* texels, std::uint32_t pitch, std::uint8_t* out) {
            test::encode_bc3_block_as_cxx17(texels, pitch, out);
        });
    EXPECT_EQ(cxx17, device_bc3_tile(image));
}

}  // namespace
}  // namespace vtpage
