// The bake's block codec: every format survives a round trip within a PSNR bound, blocks land
// where tile_format.hpp says, threads may share it, and bad arguments are refused.
#include <gtest/gtest.h>

#include <squish.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>
#include <vector>

#include "../support/expect_error.hpp"
#include "block_codec.hpp"
#include "test_images.hpp"

namespace vtpage {
namespace {

using bake::decode_tile;
using bake::encode_tile;
using bake::EncodeQuality;
using vt::TileFormat;

constexpr std::array<TileFormat, 4> compressed_formats = {TileFormat::bc1, TileFormat::bc3,
                                                          TileFormat::bc4, TileFormat::bc5};

std::uint32_t tile_size(TileFormat format) { return vt::tile_format_info(format).tile_size; }

// The channels a format keeps (bit c: channel c).
std::uint32_t kept_channels(TileFormat format) {
    switch (format) {
        case TileFormat::bc1:
            return 0b0111;
        case TileFormat::bc4:
            return 0b0001;
        case TileFormat::bc5:
            return 0b0011;
        default:
            return 0b1111;
    }
}

std::vector<std::byte> encoded(TileFormat format, const test::TestImage& image,
                               EncodeQuality quality = EncodeQuality::good) {
    std::vector<std::byte> tile(vt::tile_format_info(format).tile_bytes());
    encode_tile(format, image.rgba, tile, quality);
    return tile;
}

std::vector<std::uint8_t> decoded(TileFormat format, std::span<const std::byte> tile) {
    std::vector<std::uint8_t> rgba(std::size_t(tile_size(format)) * tile_size(format) * 4);
    decode_tile(format, tile, rgba);
    return rgba;
}

double round_trip_psnr(TileFormat format, const test::TestImage& image,
                       EncodeQuality quality = EncodeQuality::good) {
    const std::vector<std::uint8_t> back = decoded(format, encoded(format, image, quality));
    return test::psnr(image.rgba, back, kept_channels(format));
}

struct PsnrBound {
    TileFormat format;
    double gradient;  // dB, at least
    double photo_like;
    double noise;
};

// Measured with libsquish 1.15, cluster fit (gradient / photo-like / noise, dB): bc1 46.70 /
// 35.39 / 13.75, bc3 47.94 / 36.50 / 14.96, bc4 and bc5 lossless / 46.7 / 29.35 (a gradient
// changes by a few levels within a block, which BC4's eight levels hold exactly).
constexpr std::array<PsnrBound, 4> psnr_bounds = {{
    {TileFormat::bc1, 46.0, 35.0, 13.5},
    {TileFormat::bc3, 47.5, 36.0, 14.5},
    {TileFormat::bc4, 60.0, 46.0, 29.0},
    {TileFormat::bc5, 60.0, 46.0, 29.0},
}};

TEST(BlockCodec, RoundTripOfEachFormatStaysWithinItsPsnrBound) {
    for (const PsnrBound& bound : psnr_bounds) {
        SCOPED_TRACE(vt::tile_format_name(bound.format));
        const std::uint32_t size = tile_size(bound.format);
        const double gradient = round_trip_psnr(bound.format, test::gradient_image(size));
        const double photo_like = round_trip_psnr(bound.format, test::photo_like_image(size, 3));
        const double noise = round_trip_psnr(bound.format, test::noise_image(size, 7));
        std::printf("%s: gradient %.2f dB, photo-like %.2f dB, noise %.2f dB\n",
                    vt::tile_format_name(bound.format), gradient, photo_like, noise);
        EXPECT_GE(gradient, bound.gradient);
        EXPECT_GE(photo_like, bound.photo_like);
        EXPECT_GE(noise, bound.noise);
    }
}

TEST(BlockCodec, DecodedChannelsAFormatDropsAreConstant) {
    const test::TestImage image = test::noise_image(256, 11);
    for (TileFormat format : compressed_formats) {
        SCOPED_TRACE(vt::tile_format_name(format));
        const std::vector<std::uint8_t> back = decoded(format, encoded(format, image));
        const std::uint32_t kept = kept_channels(format);
        for (std::size_t i = 0; i < back.size(); ++i) {
            const std::uint32_t channel = i % 4;
            if (kept & (1u << channel)) continue;
            ASSERT_EQ(back[i], channel == 3 ? 255 : 0) << "byte " << i;
        }
    }
}

TEST(BlockCodec, ClusterFitIsNoWorseThanRangeFit) {
    for (TileFormat format : {TileFormat::bc1, TileFormat::bc3}) {
        SCOPED_TRACE(vt::tile_format_name(format));
        const test::TestImage image = test::photo_like_image(256, 5);
        const double fast = round_trip_psnr(format, image, EncodeQuality::fast);
        const double good = round_trip_psnr(format, image, EncodeQuality::good);
        std::printf("%s photo-like: range fit %.2f dB, cluster fit %.2f dB\n",
                    vt::tile_format_name(format), fast, good);
        EXPECT_GT(good, fast);
    }
}

TEST(BlockCodec, Rgba8IsCopiedBothWays) {
    const test::TestImage image = test::noise_image(128, 3);
    const std::vector<std::byte> tile = encoded(TileFormat::rgba8, image);
    ASSERT_EQ(tile.size(), image.rgba.size());
    EXPECT_EQ(std::memcmp(tile.data(), image.rgba.data(), tile.size()), 0);
    EXPECT_EQ(decoded(TileFormat::rgba8, tile), image.rgba);
}

// One white block in a black tile: its bytes sit at (by * blocks_per_row + bx) * block_bytes,
// every other block is black's, and decoding puts the white texels back on that block only.
TEST(BlockCodec, BlocksAreStoredRowByRow) {
    for (TileFormat format : compressed_formats) {
        SCOPED_TRACE(vt::tile_format_name(format));
        const vt::TileFormatInfo info = vt::tile_format_info(format);
        const std::uint32_t last = info.blocks_per_row() - 1;
        for (const auto& [white_x, white_y] :
             std::array<std::array<std::uint32_t, 2>, 4>{{{5, 2}, {2, 5}, {last, 1}, {0, last}}}) {
            SCOPED_TRACE(testing::Message() << "white block " << white_x << ", " << white_y);
            test::TestImage image{
                info.tile_size, info.tile_size,
                std::vector<std::uint8_t>(std::size_t(info.tile_size) * info.tile_size * 4)};
            for (std::uint32_t y = 0; y < 4; ++y) {
                for (std::uint32_t x = 0; x < 4; ++x) {
                    const std::size_t texel =
                        std::size_t(white_y * 4 + y) * info.tile_size + white_x * 4 + x;
                    std::fill_n(&image.rgba[texel * 4], 4, std::uint8_t(255));
                }
            }
            const std::vector<std::byte> tile = encoded(format, image);
            const std::size_t white_block = std::size_t(white_y) * (last + 1) + white_x;
            const std::byte* black = &tile[white_block == 0 ? info.block_bytes : 0];
            for (std::size_t block = 0; block <= std::size_t(last) * (last + 1) + last; ++block) {
                const bool same =
                    std::memcmp(&tile[block * info.block_bytes], black, info.block_bytes) == 0;
                ASSERT_EQ(same, block != white_block) << "block " << block;
            }
            const std::vector<std::uint8_t> back = decoded(format, tile);
            for (std::uint32_t y = 0; y < info.tile_size; ++y) {
                for (std::uint32_t x = 0; x < info.tile_size; ++x) {
                    const bool white = x / 4 == white_x && y / 4 == white_y;
                    const std::uint8_t red = back[(std::size_t(y) * info.tile_size + x) * 4];
                    ASSERT_EQ(red, white ? 255 : 0) << "texel " << x << ", " << y;
                }
            }
        }
    }
}

TEST(BlockCodec, ThreadsEncodingAtOnceGetTheBytesOfOneThread) {
    const test::TestImage image = test::photo_like_image(256, 9);
    const std::vector<std::byte> expected = encoded(TileFormat::bc1, image);
    std::vector<std::vector<std::byte>> results(6);
    std::vector<std::thread> threads;
    for (auto& result : results) {
        threads.emplace_back([&] { result = encoded(TileFormat::bc1, image); });
    }
    for (std::thread& thread : threads) thread.join();
    for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST(BlockCodec, BadArgumentsAreRefusedNamingWhatWasWrong) {
    const test::TestImage image = test::gradient_image(256);
    std::vector<std::byte> tile(vt::tile_format_info(TileFormat::bc1).tile_bytes());
    std::vector<std::uint8_t> rgba(image.rgba.size());
    auto message_of = [](const auto& call) -> std::string {
        try {
            call();
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
            EXPECT_TRUE(error.operation() == "encode_tile" || error.operation() == "decode_tile");
            return error.detail();
        }
        ADD_FAILURE() << "no error";
        return {};
    };
    const auto bad_format = static_cast<TileFormat>(7);
    EXPECT_NE(message_of([&] { encode_tile(bad_format, image.rgba, tile); }).find("tile format 7"),
              std::string::npos);
    EXPECT_NE(message_of([&] { decode_tile(bad_format, tile, rgba); }).find("tile format 7"),
              std::string::npos);
    // A BC1 tile is 256 x 256 texels: the 128 x 128 of rgba8 is too small.
    const test::TestImage small = test::gradient_image(128);
    EXPECT_NE(message_of([&] {
                  encode_tile(TileFormat::bc1, small.rgba, tile);
              }).find("the RGBA8 input is 65536 bytes; a bc1 tile needs 262144"),
              std::string::npos);
    std::vector<std::byte> bc3_sized(vt::tile_format_info(TileFormat::bc3).tile_bytes());
    EXPECT_NE(message_of([&] {
                  encode_tile(TileFormat::bc1, image.rgba, bc3_sized);
              }).find("the output is 65536 bytes; a bc1 tile needs 32768"),
              std::string::npos);
    EXPECT_NE(message_of([&] {
                  decode_tile(TileFormat::bc1, std::span(tile).first(tile.size() - 1), rgba);
              }).find("the tile is 32767 bytes"),
              std::string::npos);
    EXPECT_NE(message_of([&] {
                  decode_tile(TileFormat::bc4, tile, std::span(rgba).subspan(4));
              }).find("the RGBA8 output is 262140 bytes"),
              std::string::npos);
    EXPECT_NE(message_of([&] {
                  encode_tile(TileFormat::rgba8, image.rgba, tile);
              }).find("a rgba8 tile needs 65536"),
              std::string::npos);
}

}  // namespace
}  // namespace vtpage
