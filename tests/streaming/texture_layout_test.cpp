#include <gtest/gtest.h>

#include <set>

#include "vtpage/streaming/texture_layout.hpp"

namespace vtpage::vt {
namespace {

TEST(TextureLayoutTest, LevelTexelRepeatsNeighboursAndClampsAtTheEdge) {
    EXPECT_EQ(level_texel(0, 0, 1024), 0u);            // clamped at the left edge
    EXPECT_EQ(level_texel(0, tile_border, 1024), 0u);  // first payload texel
    EXPECT_EQ(level_texel(0, tile_border + 1, 1024), 1u);
    EXPECT_EQ(level_texel(1, 0, 1024), tile_payload - tile_border);
    // Tile n's left border is tile n - 1's last payload texels, for every tile.
    for (std::uint32_t tile = 1; tile < 9; ++tile) {
        for (std::uint32_t t = 0; t < tile_border; ++t) {
            EXPECT_EQ(level_texel(tile, t, 1024), level_texel(tile - 1, tile_payload + t, 1024));
        }
    }
    EXPECT_EQ(level_texel(8, tile_size - 1, 1024), 1023u);  // clamped at the right edge
    EXPECT_EQ(level_texel(0, 127, 64), 63u);                // a tail level
}

TEST(TextureLayoutTest, PagePositionsRoundTrip) {
    for (std::uint32_t log2 : {0u, 6u, 7u, 10u, 13u, 16u}) {
        const TextureLayout layout(log2);
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            const PagePosition position = page_position(layout, page);
            EXPECT_EQ(page_at(layout, position), page) << "size 2^" << log2 << " page " << page;
            EXPECT_EQ(layout.mip_of_page(page), position.mip);
        }
        EXPECT_TRUE(layout.in_tail(page_position(layout, layout.tail_page()).mip));
    }
}

TEST(TextureLayoutTest, EveryTileLivesInExactlyOnePageSlot) {
    const TextureLayout layout(12);
    std::set<std::pair<std::uint64_t, std::uint32_t>> slots;
    std::size_t tiles = 0;
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        for (std::uint32_t y = 0; y < layout.mips[mip].tiles; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[mip].tiles; ++x) {
                const TileLocation where = layout.locate(mip, x, y);
                ASSERT_LT(where.page, layout.page_count);
                ASSERT_LT(where.tile_in_page, tiles_per_page);
                slots.insert({where.page, where.tile_in_page});
                ++tiles;
            }
        }
    }
    EXPECT_EQ(slots.size(), tiles);
}

TEST(TextureLayoutTest, ParentPageCoversEveryTileOfThePage) {
    for (std::uint32_t log2 : {9u, 12u, 14u}) {
        const TextureLayout layout(log2);
        for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
            for (std::uint32_t y = 0; y < layout.mips[mip].tiles; ++y) {
                for (std::uint32_t x = 0; x < layout.mips[mip].tiles; ++x) {
                    const std::uint64_t page = layout.locate(mip, x, y).page;
                    // The payload of tile x at mip m lies in tile x / 2 at mip m + 1.
                    const std::uint64_t covering = layout.locate(mip + 1, x / 2, y / 2).page;
                    ASSERT_EQ(parent_page(layout, page), covering)
                        << "size 2^" << log2 << " mip " << mip << " tile " << x << "," << y;
                    const std::uint32_t first = x * tile_payload, last = first + tile_payload - 1;
                    EXPECT_EQ(first / 2 / tile_payload, x / 2);
                    EXPECT_EQ(std::min(last, layout.mips[mip].size - 1) / 2 / tile_payload, x / 2);
                }
            }
        }
        EXPECT_EQ(parent_page(layout, layout.tail_page()), layout.tail_page());
    }
}

TEST(TextureLayoutTest, LargestTextureFitsItsLimits) {
    constexpr TextureLayout layout(max_size_log2);
    static_assert(layout.mips[0].tiles == 8739);
    EXPECT_EQ(layout.tail_first_mip, 14u);
    EXPECT_EQ(layout.mip_count - layout.tail_first_mip, 7u);  // seven tiles in the tail page
    EXPECT_LE(layout.mip_count - layout.tail_first_mip, tiles_per_page);
    EXPECT_GT(layout.page_count, 3'000'000u);
}

}  // namespace
}  // namespace vtpage::vt
