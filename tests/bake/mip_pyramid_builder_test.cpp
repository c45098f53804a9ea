// The pyramid builder against the plainest reference: every level held whole, each texel the
// rounded mean of its four (clamped) texels below, then each band cut with clamped rows.
#include "mip_pyramid_builder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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
                                         std::uint32_t b) {
    std::vector<std::uint8_t> band;
    for (std::int64_t r = 0; r < std::int64_t(p + 2 * b); ++r) {
        const std::int64_t y = std::clamp<std::int64_t>(std::int64_t(ty) * p - b + r, 0,
                                                        std::int64_t(level.height) - 1);
        const std::uint8_t* row = level.at(0, std::uint32_t(y));
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

class PyramidAgainstReference : public testing::TestWithParam<Shape> {};

TEST_P(PyramidAgainstReference, EveryBandByteForByte) {
    const Shape shape = GetParam();
    const std::vector<Level> levels =
        test::reference_levels(pattern_level(shape.width, shape.height));
    Recorded recorded;
    MipPyramidBuilder builder(shape.width, shape.height, shape.payload, shape.border,
                              recorder(recorded, shape.payload, shape.border));
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
            EXPECT_TRUE(found->second == reference_band(level, ty, shape.payload, shape.border))
                << "band (" << mip << ", " << ty << ") differs";
        }
    }
    EXPECT_EQ(recorded.bands.size(), expected_bands);
    EXPECT_EQ(recorded.order.size(), expected_bands);
    std::map<std::uint32_t, std::uint32_t> next_tile_row;
    for (const auto& [mip, ty] : recorded.order) EXPECT_EQ(ty, next_tile_row[mip]++);
}

INSTANTIATE_TEST_SUITE_P(
    SizesAndFormats, PyramidAgainstReference,
    testing::Values(Shape{1, 1, 120, 4}, Shape{1, 37, 120, 4}, Shape{37, 1, 120, 4},
                    Shape{3, 5, 120, 4}, Shape{241, 481, 120, 4}, Shape{1000, 7, 120, 4},
                    Shape{1, 1, 248, 4}, Shape{1, 37, 248, 4}, Shape{37, 1, 248, 4},
                    Shape{3, 5, 248, 4}, Shape{241, 481, 248, 4}, Shape{1000, 7, 248, 4},
                    Shape{13, 29, 5, 2}),  // small tiles: many bands on every level
    [](const testing::TestParamInfo<Shape>& param) {
        const Shape& s = param.param;
        return std::to_string(s.width) + "x" + std::to_string(s.height) + "_P" +
               std::to_string(s.payload) + "_B" + std::to_string(s.border);
    });

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

TEST(MipPyramidBuilder, RefusesBadSizes) {
    auto discard = [](const MipBand&) {};
    EXPECT_ERRC(MipPyramidBuilder(0, 5, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, 0, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder((1u << 20) + 1, 5, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, (1u << 20) + 1, 120, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, 5, 0, 4, discard), Errc::invalid_argument);
    EXPECT_ERRC(MipPyramidBuilder(5, 5, 120, 4, nullptr), Errc::invalid_argument);
    EXPECT_NO_THROW(MipPyramidBuilder(1u << 20, 1, 120, 4, discard));
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
