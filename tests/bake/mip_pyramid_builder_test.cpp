// The pyramid builder against the plainest reference: every level held whole, each texel the
// rounded mean of its four (clamped) texels below (in linear light for sRGB colour), then each
// band cut with its rows outside the level mapped in by the address mode along v.
#include "mip_pyramid_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "../support/expect_error.hpp"
#include "../support/pattern.hpp"
#include "../support/reference_levels.hpp"

namespace vtpage::bake {
namespace {

using Level = test::ReferenceLevel;

Level pattern_level(std::uint32_t width, std::uint32_t height) {
    Level level{width, height, std::vector<std::uint8_t>(std::size_t(width) * height * 4)};
    for (std::size_t i = 0; i < level.texels.size(); ++i) {
        level.texels[i] = std::uint8_t(test::pattern_word(i, 7));
    }
    return level;
}

std::vector<std::uint8_t> reference_band(const Level& level, std::uint32_t ty, std::uint32_t p,
                                         std::uint32_t b, vt::AddressMode address_v) {
    std::vector<std::uint8_t> band;
    for (std::int64_t r = 0; r < std::int64_t(p + 2 * b); ++r) {
        const std::uint32_t y =
            vt::address_texel(address_v, std::int64_t(ty) * p - b + r, level.height);
        const std::uint8_t* row = level.at(0, y);
        band.insert(band.end(), row, row + std::size_t(level.width) * 4);
    }
    return band;
}

// What the sink was given: each band's bytes by (mip, tile row), and the order of the calls.
struct Recorded {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint8_t>> bands;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint32_t, std::uint32_t>>
        sizes;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> order;
};

MipBandSink recorder(Recorded& recorded, std::uint32_t p, std::uint32_t b) {
    return [&recorded, p, b](const MipBand& band) {
        const auto key = std::make_pair(band.mip, band.tile_row);
        ASSERT_EQ(band.rows.size(), p + 2 * b);
        std::vector<std::uint8_t> bytes;
        for (std::size_t r = 0; r < band.rows.size(); ++r) {
            bytes.insert(bytes.end(), band.row(r).begin(), band.row(r).end());
        }
        EXPECT_TRUE(recorded.bands.emplace(key, std::move(bytes)).second)
            << "band (" << band.mip << ", " << band.tile_row << ") came twice";
        recorded.sizes[key] = {band.level_width, band.level_height};
        recorded.order.push_back(key);
    };
}

// Feeds the rows in uneven pieces: 1 row, then 7, then 3 at a time.
void feed(MipPyramidBuilder& builder, const Level& level) {
    const std::size_t row_bytes = std::size_t(level.width) * 4;
    std::uint32_t y = 0;
    for (std::uint32_t piece = 1; y < level.height; piece = piece == 1 ? 7 : 3) {
        const std::uint32_t count = std::min(piece, level.height - y);
        builder.add_rows(count, std::span(level.texels).subspan(y * row_bytes, count * row_bytes));
        y += count;
    }
    builder.finish();
}

struct Shape {
    std::uint32_t width, height, payload, border;
};

class PyramidAgainstReference : public testing::TestWithParam<std::tuple<Shape, vt::AddressMode>> {
};

TEST_P(PyramidAgainstReference, EveryBandByteForByte) {
    const auto [shape, address_v] = GetParam();
    const std::vector<Level> levels =
        test::reference_levels(pattern_level(shape.width, shape.height));
    Recorded recorded;
    MipPyramidBuilder builder(shape.width, shape.height, shape.payload, shape.border,
                              recorder(recorded, shape.payload, shape.border),
                              {vt::AddressMode::clamp_to_edge, address_v, vt::ColorSpace::linear});
    ASSERT_EQ(builder.mip_count(), levels.size());
    feed(builder, levels[0]);

    std::size_t expected_bands = 0;
    for (std::uint32_t mip = 0; mip < levels.size(); ++mip) {
        const Level& level = levels[mip];
        const std::uint32_t tile_rows = (level.height + shape.payload - 1) / shape.payload;
        expected_bands += tile_rows;
        for (std::uint32_t ty = 0; ty < tile_rows; ++ty) {
            const auto found = recorded.bands.find({mip, ty});
            ASSERT_NE(found, recorded.bands.end()) << "no band (" << mip << ", " << ty << ")";
            EXPECT_EQ(recorded.sizes[std::make_pair(mip, ty)],
                      std::make_pair(level.width, level.height));
            EXPECT_TRUE(found->second ==
                        reference_band(level, ty, shape.payload, shape.border, address_v))
                << "band (" << mip << ", " << ty << ") differs";
        }
    }
    EXPECT_EQ(recorded.bands.size(), expected_bands);
    EXPECT_EQ(recorded.order.size(), expected_bands);
    // In order, but for the bands whose border wraps to the level's last rows (repeat along v).
    std::map<std::uint32_t, std::uint32_t> next_tile_row;
    for (const auto& [mip, ty] : recorded.order) {
        if (address_v == vt::AddressMode::repeat &&
            std::uint64_t(ty) * shape.payload < shape.border) {
            continue;
        }
        while (address_v == vt::AddressMode::repeat &&
               std::uint64_t(next_tile_row[mip]) * shape.payload < shape.border) {
            ++next_tile_row[mip];
        }
        EXPECT_EQ(ty, next_tile_row[mip]++) << "mip " << mip;
    }
}

INSTANTIATE_TEST_SUITE_P(
    SizesAndFormats, PyramidAgainstReference,
    testing::Combine(testing::Values(Shape{1, 1, 120, 4}, Shape{1, 37, 120, 4},
                                     Shape{37, 1, 120, 4}, Shape{3, 5, 120, 4},
                                     Shape{241, 481, 120, 4}, Shape{1000, 7, 120, 4},
                                     Shape{1, 1, 248, 4}, Shape{1, 37, 248, 4},
                                     Shape{37, 1, 248, 4}, Shape{3, 5, 248, 4},
                                     Shape{241, 481, 248, 4}, Shape{1000, 7, 248, 4},
                                     Shape{13, 29, 5, 2},  // small tiles: many bands on every level
                                     Shape{7, 40, 3, 5},   // a border wider than the payload
                                     Shape{5, 2, 120, 4}),  // a level of 2 rows under a border of 4
                     testing::Values(vt::AddressMode::clamp_to_edge, vt::AddressMode::repeat,
                                     vt::AddressMode::mirrored_repeat)),
    [](const testing::TestParamInfo<std::tuple<Shape, vt::AddressMode>>& param) {
        const Shape& s = std::get<0>(param.param);
        return std::to_string(s.width) + "x" + std::to_string(s.height) + "_P" +
               std::to_string(s.payload) + "_B" + std::to_string(s.border) + "_" +
               std::string(vt::address_mode_name(std::get<1>(param.param)));
    });

// The levels the bands hold: each band's payload rows, level by level.
std::vector<Level> levels_of(const Recorded& recorded, std::uint32_t p, std::uint32_t b) {
    std::vector<Level> levels;
    for (const auto& [key, bytes] : recorded.bands) {
        const auto [mip, ty] = key;
        const auto [width, height] = recorded.sizes.at(key);
        if (levels.size() <= mip) levels.resize(mip + 1);
        Level& level = levels[mip];
        level.width = width;
        level.height = height;
        level.texels.resize(std::size_t(width) * height * 4);
        const std::size_t row_bytes = std::size_t(width) * 4;
        for (std::uint32_t r = 0; r < p && std::uint64_t(ty) * p + r < height; ++r) {
            std::copy_n(&bytes[(b + r) * row_bytes], row_bytes,
                        &level.texels[(std::size_t(ty) * p + r) * row_bytes]);
        }
    }
    return levels;
}

// The most any channel of `got` is from `want` (the colour channels, or alpha alone).
int largest_difference(const Level& got, const Level& want, bool alpha) {
    int largest = 0;
    for (std::size_t i = 0; i < got.texels.size(); ++i) {
        if ((i % 4 == 3) != alpha) continue;
        largest = std::max(largest, std::abs(int(got.texels[i]) - int(want.texels[i])));
    }
    return largest;
}

// High contrast: every other texel black or white in colour, alpha its own pattern.
Level checker_level(std::uint32_t width, std::uint32_t height) {
    Level level = pattern_level(width, height);
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            std::uint8_t* texel = &level.texels[(std::size_t(y) * width + x) * 4];
            const std::uint8_t value = (x + y) % 2 ? 255 : (x * 7 + y * 3) % 40;
            texel[0] = texel[1] = texel[2] = value;
        }
    }
    return level;
}

struct Built {
    std::vector<Level> levels;
};

Built build(const Level& image, vt::ColorSpace color_space) {
    Recorded recorded;
    MipPyramidBuilder builder(
        image.width, image.height, 120, 4, recorder(recorded, 120, 4),
        {vt::AddressMode::clamp_to_edge, vt::AddressMode::clamp_to_edge, color_space});
    feed(builder, image);
    return {levels_of(recorded, 120, 4)};
}

// Each level of an sRGB pyramid is, within 1/255, the linear-light box filter of the level above
// it (decoded, averaged, encoded); alpha the plain rounded mean, exactly.
TEST(MipPyramidBuilder, SrgbLevelsAreFilteredInLinearLight) {
    for (const Level& image : {pattern_level(301, 157), checker_level(256, 255)}) {
        const Built built = build(image, vt::ColorSpace::srgb);
        ASSERT_GE(built.levels.size(), 9u);
        EXPECT_EQ(built.levels[0].texels, image.texels);
        for (std::size_t mip = 1; mip < built.levels.size(); ++mip) {
            const Level want = test::next_reference_level(built.levels[mip - 1], true);
            const Level& got = built.levels[mip];
            ASSERT_EQ(std::make_pair(got.width, got.height),
                      std::make_pair(want.width, want.height));
            EXPECT_LE(largest_difference(got, want, false), 1) << "mip " << mip;
            EXPECT_EQ(largest_difference(got, want, true), 0) << "mip " << mip;
        }
    }
}

// A linear pyramid averages the stored values: on a high-contrast image that is far from the
// linear-light filter (black and white average to 128 stored, to 188 in linear light), so the
// test above tells the two apart.
TEST(MipPyramidBuilder, LinearLevelsAreNotFilteredInLinearLight) {
    const Level image = checker_level(256, 255);
    const Built built = build(image, vt::ColorSpace::linear);
    const std::vector<Level> plain = test::reference_levels(image);
    ASSERT_EQ(built.levels.size(), plain.size());
    for (std::size_t mip = 1; mip < built.levels.size(); ++mip) {
        EXPECT_EQ(built.levels[mip].texels, plain[mip].texels) << "mip " << mip;
    }
    const Level linear_light = test::next_reference_level(built.levels[0], true);
    EXPECT_GT(largest_difference(built.levels[1], linear_light, false), 40);
    EXPECT_GT(
        largest_difference(build(image, vt::ColorSpace::srgb).levels[1], built.levels[1], false),
        40);
}

// A level's bands go out as soon as their rows exist, not level by level at the end.
TEST(MipPyramidBuilder, LevelsInterleave) {
    Recorded recorded;
    MipPyramidBuilder builder(241, 481, 120, 4, recorder(recorded, 120, 4));
    feed(builder, pattern_level(241, 481));
    const auto first_of_mip1 =
        std::find(recorded.order.begin(), recorded.order.end(), std::make_pair(1u, 0u));
    const auto last_of_mip0 =
        std::find(recorded.order.begin(), recorded.order.end(), std::make_pair(0u, 4u));
    EXPECT_LT(first_of_mip1, last_of_mip0);
}

TEST(MipPyramidBuilder, BuffersGrowWithWidthNotHeight) {
    auto discard = [](const MipBand&) {};
    const MipPyramidBuilder short_image(1000, 1000, 120, 4, discard);
    const MipPyramidBuilder tall_image(1000, 1000000, 120, 4, discard);
    const MipPyramidBuilder wide_image(4000, 1000, 120, 4, discard);
    // A ring of P + 2B rows a level (fewer on levels lower than that), whatever the height.
    const std::uint64_t bound = 2u * (120 + 8 + 2) * 1000 * 4;
    EXPECT_LE(short_image.buffer_bytes_peak(), bound);
    EXPECT_LE(tall_image.buffer_bytes_peak(), bound);
    EXPECT_GT(wide_image.buffer_bytes_peak(), 3 * short_image.buffer_bytes_peak());
}

// Repeat along v keeps each tall level's first rows as well: the buffers still follow the width.
TEST(MipPyramidBuilder, RepeatAlongVStillGrowsWithWidthNotHeight) {
    auto discard = [](const MipBand&) {};
    const vt::TextureSampling repeat_v{vt::AddressMode::clamp_to_edge, vt::AddressMode::repeat,
                                       vt::ColorSpace::linear};
    const MipPyramidBuilder clamp_tall(1000, 1000000, 120, 4, discard);
    const MipPyramidBuilder short_image(1000, 1000, 120, 4, discard, repeat_v);
    const MipPyramidBuilder tall_image(1000, 1000000, 120, 4, discard, repeat_v);
    // The ring, and the first P + B rows of the levels taller than the ring.
    const std::uint64_t bound = 2u * (120 + 8 + 2 + 120 + 4 + 2) * 1000 * 4;
    std::printf("1000 x 1000000: row buffers %llu bytes with clamp along v, %llu with repeat\n",
                static_cast<unsigned long long>(clamp_tall.buffer_bytes_peak()),
                static_cast<unsigned long long>(tall_image.buffer_bytes_peak()));
    EXPECT_LE(short_image.buffer_bytes_peak(), bound);
    EXPECT_LE(tall_image.buffer_bytes_peak(), bound);
    EXPECT_LE(tall_image.buffer_bytes_peak(), 2 * clamp_tall.buffer_bytes_peak());
}

// Every band of a tall image that repeats along v comes, band 0 of each level last of its level.
TEST(MipPyramidBuilder, RepeatAlongVHoldsTheFirstBandUntilTheLastRow) {
    Recorded recorded;
    const vt::TextureSampling repeat_v{vt::AddressMode::clamp_to_edge, vt::AddressMode::repeat,
                                       vt::ColorSpace::linear};
    const Level image = pattern_level(9, 700);
    MipPyramidBuilder builder(9, 700, 120, 4, recorder(recorded, 120, 4), repeat_v);
    feed(builder, image);
    const auto band0 = recorded.bands.at({0, 0});
    const std::size_t row_bytes = 9 * 4;
    // Its top border is the level's last 4 rows, then rows 0 .. 123.
    EXPECT_TRUE(std::equal(band0.begin(), band0.begin() + 4 * row_bytes,
                           image.texels.end() - 4 * row_bytes));
    EXPECT_TRUE(std::equal(band0.begin() + 4 * row_bytes, band0.end(), image.texels.begin()));
    const auto first =
        std::find(recorded.order.begin(), recorded.order.end(), std::make_pair(0u, 0u));
    // Band 4 needs rows up to 603 only, band 0 row 699.
    const auto band4 =
        std::find(recorded.order.begin(), recorded.order.end(), std::make_pair(0u, 4u));
    EXPECT_GT(first, band4) << "band 0 came before the level's last row existed";
}

TEST(MipPyramidBuilder, RefusesBadSizes) {
    auto discard = [](const MipBand&) {};
    EXPECT_ERRC(MipPyramidBuilder(0, 5, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, 0, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder((1u << 20) + 1, 5, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, (1u << 20) + 1, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, 5, 0, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, 5, 120, 4, nullptr), Errc::invalid_argument);
    EXPECT_NO_THROW(MipPyramidBuilder(1u << 20, 1, 120, 4, discard));
    EXPECT_ERRC(MipPyramidBuilder(
                    5, 5, 120, 4, discard,
                    {vt::AddressMode::clamp_to_edge, vt::AddressMode(3), vt::ColorSpace::linear}),
                Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(
                    5, 5, 120, 4, discard,
                    {vt::AddressMode::clamp_to_edge, vt::AddressMode::repeat, vt::ColorSpace(2)}),
                Errc::invalid_argument);
}

TEST(MipPyramidBuilder, RefusesWrongRowCounts) {
    std::size_t bands = 0;
    MipPyramidBuilder builder(4, 3, 120, 4, [&](const MipBand&) { ++bands; });
    std::vector<std::uint8_t> rows(4 * 4 * 4);
    EXPECT_ERRC(builder.add_rows(1, std::span(rows).first(15)), Errc::invalid_argument);
    EXPECT_ERRC(builder.add_rows(4, rows), Errc::invalid_argument);  // only 3 rows
    builder.add_rows(2, std::span(rows).first(32));
    EXPECT_ERRC(builder.finish(), Errc::invalid_argument);  // a row is missing
    EXPECT_ERRC(builder.add_rows(2, std::span(rows).first(32)), Errc::invalid_argument);
    builder.add_rows(1, std::span(rows).first(16));
    builder.finish();
    EXPECT_EQ(bands, builder.mip_count());
    EXPECT_ERRC(builder.add_rows(1, std::span(rows).first(16)), Errc::invalid_argument);
    EXPECT_ERRC(builder.finish(), Errc::invalid_argument);
}

TEST(MipPyramidBuilder, SinkThatThrowsLeavesItUnusable) {
    MipPyramidBuilder builder(2, 2, 120, 4, [](const MipBand&) { throw std::runtime_error("x"); });
    std::vector<std::uint8_t> rows(2 * 2 * 4);
    EXPECT_THROW(builder.add_rows(2, rows), std::runtime_error);
    EXPECT_ERRC(builder.finish(), Errc::invalid_argument);
}

}  // namespace
}  // namespace vtpage::bake
