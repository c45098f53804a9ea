#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "vtpage/streaming/layout/texture_layout.hpp"

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
        for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
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
            for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
                for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                    const std::uint64_t page = layout.locate(mip, x, y).page;
                    // The payload of tile x at mip m lies in tile x / 2 at mip m + 1.
                    const std::uint64_t covering = layout.locate(mip + 1, x / 2, y / 2).page;
                    ASSERT_EQ(parent_page(layout, page), covering)
                        << "size 2^" << log2 << " mip " << mip << " tile " << x << "," << y;
                    const std::uint32_t first = x * tile_payload, last = first + tile_payload - 1;
                    EXPECT_EQ(first / 2 / tile_payload, x / 2);
                    EXPECT_EQ(std::min(last, layout.mips[mip].width - 1) / 2 / tile_payload, x / 2);
                }
            }
        }
        EXPECT_EQ(parent_page(layout, layout.tail_page()), layout.tail_page());
    }
}

TEST(TextureLayoutTest, LargestTextureFitsItsLimits) {
    constexpr TextureLayout layout(max_size_log2);
    static_assert(layout.mips[0].tiles_x == 8739);
    EXPECT_EQ(layout.tail_first_mip, 14u);
    EXPECT_EQ(layout.mip_count - layout.tail_first_mip, 7u);  // seven tiles in the tail page
    EXPECT_LE(layout.mip_count - layout.tail_first_mip, tiles_per_page);
    EXPECT_GT(layout.page_count, 3'000'000u);
}

// Shapes of every kind: a texel, strips, odd sizes, a photo's aspect, the widest strip.
struct Shape {
    std::uint32_t width, height;
};
const std::vector<Shape> shapes = {{1, 1},     {1, 1000},    {1000, 1},      {3, 5},
                                   {241, 481}, {5120, 2880}, {1u << 20, 17}, {1024, 1024}};
const std::vector<TileFormat> formats = {TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3,
                                         TileFormat::bc4, TileFormat::bc5};

std::uint32_t reference_mip_count(std::uint32_t width, std::uint32_t height) {
    std::uint32_t count = 1;
    while ((std::max(width, height) >> (count - 1)) > 1) ++count;
    return count;
}

TEST(TextureLayoutShapes, LevelsFollowVulkansChain) {
    for (const Shape& shape : shapes) {
        const TextureLayout layout(shape.width, shape.height);
        ASSERT_EQ(layout.mip_count, reference_mip_count(shape.width, shape.height));
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            EXPECT_EQ(layout.mips[mip].width, std::max(1u, shape.width >> mip));
            EXPECT_EQ(layout.mips[mip].height, std::max(1u, shape.height >> mip));
        }
        EXPECT_EQ(layout.mips[layout.mip_count - 1].width, 1u);
        EXPECT_EQ(layout.mips[layout.mip_count - 1].height, 1u);
    }
}

TEST(TextureLayoutShapes, PaddingStopsAtWholeTilesAndPages) {
    for (const TileFormat format : formats) {
        const TileFormatInfo info = tile_format_info(format);
        for (const Shape& shape : shapes) {
            const TextureLayout layout(shape.width, shape.height, format);
            for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
                const MipLevel& level = layout.mips[mip];
                // The last tile and page of a row still hold texels of the level.
                EXPECT_LT((level.tiles_x - 1) * info.tile_payload(), level.width);
                EXPECT_LT((level.tiles_y - 1) * info.tile_payload(), level.height);
                EXPECT_LT((level.pages_x - 1) * info.page_tiles_x, level.tiles_x);
                EXPECT_LT((level.pages_y - 1) * info.page_tiles_y, level.tiles_y);
            }
            // The tail: every level from tail_first_mip fits one tile, one slot each.
            EXPECT_LE(layout.mips[layout.tail_first_mip].width, info.tile_payload());
            EXPECT_LE(layout.mips[layout.tail_first_mip].height, info.tile_payload());
            EXPECT_LE(layout.mip_count - layout.tail_first_mip, info.tiles_per_page());
        }
    }
    // The photo of the issue: 5120 x 2880 in RGBA8 needs 53 pages, not the 8192 x 8192
    // square's 1,398 (4.5x the texels).
    EXPECT_EQ(TextureLayout(5120, 2880).page_count, 53u);
    EXPECT_EQ(TextureLayout(13).page_count, TextureLayout(8192, 8192).page_count);
}

TEST(TextureLayoutShapes, EveryTileLivesInExactlyOnePageSlot) {
    for (const TileFormat format : formats) {
        for (const Shape& shape : {Shape{3, 5}, Shape{241, 481}, Shape{5120, 2880}}) {
            const TextureLayout layout(shape.width, shape.height, format);
            std::set<std::pair<std::uint64_t, std::uint32_t>> slots;
            for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
                for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
                    for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                        const TileLocation where = layout.locate(mip, x, y);
                        ASSERT_LT(where.page, layout.page_count);
                        ASSERT_LT(where.tile_in_page, tile_format_info(format).tiles_per_page());
                        EXPECT_EQ(page_position(layout, where.page).mip,
                                  std::min(mip, layout.tail_first_mip));
                        EXPECT_TRUE(slots.insert({where.page, where.tile_in_page}).second);
                        EXPECT_EQ(where.byte_offset() + where.tile_bytes,
                                  std::uint64_t(where.tile_in_page + 1) *
                                      tile_format_info(format).tile_bytes());
                    }
                }
            }
            // Every page holds at least one tile.
            std::set<std::uint64_t> pages;
            for (const auto& slot : slots) pages.insert(slot.first);
            EXPECT_EQ(pages.size(), layout.page_count);
        }
    }
}

// The texels each page holds add up to every level's texels, and a page holds exactly the
// texels whose covering page it is (checked on a grid of places).
TEST(TextureLayoutShapes, PagesHoldEveryTexelOnce) {
    for (const TileFormat format : formats) {
        for (const Shape& shape : {Shape{1, 1}, Shape{3, 5}, Shape{241, 481}, Shape{5120, 2880},
                                   Shape{1u << 20, 17}, Shape{20000, 30000}}) {
            const TextureLayout layout(shape.width, shape.height, format);
            std::uint64_t levels = 0;
            for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
                levels += std::uint64_t(layout.mips[mip].width) * layout.mips[mip].height;
            }
            std::uint64_t pages = 0;
            for (std::uint64_t page = 0; page < layout.page_count; ++page) {
                const std::uint64_t texels = layout.texels_in_page(page);
                EXPECT_GT(texels, 0u) << "page " << page;
                pages += texels;
            }
            EXPECT_EQ(pages, levels)
                << shape.width << " x " << shape.height << " " << tile_format_name(format);
            EXPECT_EQ(layout.texels_in_page(layout.page_count), 0u);
        }
    }
    // A page in the middle of level 0 is full; the last one of the row holds the remainder.
    const TextureLayout bc1(5120, 2880, TileFormat::bc1);
    const std::uint64_t span = 8 * 248;
    EXPECT_EQ(bc1.texels_in_page(0), span * span);
    EXPECT_EQ(bc1.texels_in_page(2), (5120 - 2 * span) * span);
}

TEST(TextureLayoutShapes, TheCoveringPageHoldsThePlaceAtEveryLevel) {
    for (const Shape& shape : shapes) {
        const TextureLayout layout(shape.width, shape.height);
        for (std::uint32_t from = 0; from < layout.mip_count; ++from) {
            const MipLevel& level = layout.mips[from];
            for (std::uint32_t i = 0; i < 7; ++i) {
                const std::uint32_t x = std::uint32_t(std::uint64_t(level.width - 1) * i / 6);
                const std::uint32_t y = std::uint32_t(std::uint64_t(level.height - 1) * i / 6);
                // The place's uv, as the shader sees it (float), on every coarser level.
                const double u = (x + 0.5) / level.width, v = (y + 0.5) / level.height;
                for (std::uint32_t to = from; to < layout.mip_count; ++to) {
                    const MipLevel& target = layout.mips[to];
                    const auto tx =
                        std::uint32_t(std::min<double>(u * target.width, target.width - 1));
                    const auto ty =
                        std::uint32_t(std::min<double>(v * target.height, target.height - 1));
                    const std::uint64_t expected =
                        layout.in_tail(to)
                            ? layout.tail_page()
                            : layout.locate(to, tx / tile_payload, ty / tile_payload).page;
                    EXPECT_EQ(covering_page(layout, from, x, y, to), expected)
                        << shape.width << "x" << shape.height << " mip " << from << " -> " << to
                        << " texel " << x << "," << y;
                }
            }
        }
    }
}

// How many texels of the levels above the tail lie, at the next level, in another tile than
// (tile x / 2): the tile x / 2 rule of square powers of two.
std::size_t places_whose_coarser_tile_is_not_half(const TextureLayout& layout) {
    std::size_t differ = 0;
    for (std::uint32_t mip = 0; mip + 1 < layout.tail_first_mip; ++mip) {
        const MipLevel& level = layout.mips[mip];
        const MipLevel& next = layout.mips[mip + 1];
        for (std::uint32_t x = 0; x < level.width; ++x) {
            differ +=
                place_texel(x, level.width, next.width) / tile_payload != x / tile_payload / 2;
        }
    }
    return differ;
}

TEST(TextureLayoutShapes, AtNonPowerOfTwoSizesTheParentIsFoundFromThePlace) {
    // At powers of two the place and x / 2 agree; at odd sizes (a 1500-wide image has levels of
    // 375 and 187 texels) they do not, which is why coarser pages are found from the place.
    EXPECT_EQ(places_whose_coarser_tile_is_not_half(TextureLayout(14)), 0u);
    EXPECT_GT(places_whose_coarser_tile_is_not_half(TextureLayout(1500, 700)), 0u);
    // Every chain of parents ends at the tail, one level coarser each step.
    const TextureLayout layout(1500, 700);
    for (std::uint64_t page = 0; page + 1 < layout.page_count; ++page) {
        std::uint64_t p = page;
        std::uint32_t steps = 0;
        while (p != layout.tail_page() && steps < layout.mip_count) {
            const std::uint64_t parent = parent_page(layout, p);
            EXPECT_GT(page_position(layout, parent).mip, page_position(layout, p).mip);
            p = parent;
            ++steps;
        }
        EXPECT_EQ(p, layout.tail_page());
    }
}

TEST(TextureLayoutShapes, ShapesOutsideTheLimitsAreNotValid) {
    EXPECT_TRUE((TextureShape{1, 1}).valid());
    EXPECT_TRUE((TextureShape{max_size, max_size}).valid());
    EXPECT_FALSE((TextureShape{0, 5}).valid());
    EXPECT_FALSE((TextureShape{5, max_size + 1}).valid());
    EXPECT_FALSE((TextureShape{5, 5, TileFormat(7)}).valid());
    EXPECT_FALSE(TextureShape::square(21).valid());
    EXPECT_FALSE(TextureShape::square(40).valid());
    // A layout made from one anyway is clamped into range, never out of bounds.
    const TextureLayout clamped(TextureShape{0, max_size + 5, TileFormat(9)});
    EXPECT_EQ(clamped.width, 1u);
    EXPECT_EQ(clamped.height, max_size);
    EXPECT_EQ(clamped.format, TileFormat::rgba8);
}

// Tile levels: in the finest levels a page is one tile, in the rest pages are as without them,
// and every page's bytes are found in the source's pages where the same tiles are.
TEST(TextureLayoutTileLevels, ATileLevelGivesEachTileAPageOfItsOwn) {
    for (const TileFormat format : {TileFormat::rgba8, TileFormat::bc1}) {
        for (const Shape& shape : {Shape{3, 5}, Shape{241, 481}, Shape{5120, 2880}}) {
            for (const std::uint32_t tile_levels : {1u, 2u, 30u}) {
                const TextureShape tiled{shape.width, shape.height, format, {}, tile_levels};
                const TextureLayout layout(tiled);
                const TextureLayout source(tiled.untiled());
                EXPECT_EQ(layout.tile_levels, std::min(tile_levels, source.tail_first_mip));
                EXPECT_EQ(
                    layout.shape(),
                    (TextureShape{shape.width, shape.height, format, {}, layout.tile_levels}));
                EXPECT_EQ(source.tile_levels, 0u);
                std::set<std::uint64_t> pages;
                for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
                    const MipLevel& level = layout.mips[mip];
                    for (std::uint32_t y = 0; y < level.tiles_y; ++y) {
                        for (std::uint32_t x = 0; x < level.tiles_x; ++x) {
                            const TileLocation where = layout.locate(mip, x, y);
                            const TileLocation untiled = source.locate(mip, x, y);
                            ASSERT_LT(where.page, layout.page_count);
                            pages.insert(where.page);
                            const PagePosition position = page_position(layout, where.page);
                            EXPECT_EQ(page_at(layout, position), where.page);
                            const TileLocation from = source_location(layout, source, where.page);
                            if (layout.tile_level(mip)) {
                                // Its own page, found in the source page that holds the tile.
                                EXPECT_EQ(where.tile_in_page, 0u);
                                EXPECT_EQ(position.x, x);
                                EXPECT_EQ(position.y, y);
                                EXPECT_EQ(from.page, untiled.page);
                                EXPECT_EQ(from.tile_in_page, untiled.tile_in_page);
                            } else {
                                // The same slot, in the source page of the same place.
                                EXPECT_EQ(where.tile_in_page, untiled.tile_in_page);
                                EXPECT_EQ(from.page, untiled.page);
                                EXPECT_EQ(from.tile_in_page, 0u);
                            }
                        }
                    }
                }
                EXPECT_EQ(pages.size(), layout.page_count) << "every page holds a tile";
                std::uint64_t tiles = 0;
                for (std::uint32_t mip = 0; mip < layout.tile_levels; ++mip) {
                    tiles += std::uint64_t(layout.mips[mip].tiles_x) * layout.mips[mip].tiles_y;
                }
                std::uint64_t source_pages = 0;
                for (std::uint32_t mip = 0; mip < layout.tile_levels; ++mip) {
                    source_pages +=
                        std::uint64_t(source.mips[mip].pages_x) * source.mips[mip].pages_y;
                }
                EXPECT_EQ(layout.page_count, source.page_count - source_pages + tiles);
            }
        }
    }
}

TEST(TextureLayoutTileLevels, PagesHoldEveryTexelOnceAndParentsReachTheTail) {
    for (const Shape& shape :
         {Shape{1, 1}, Shape{241, 481}, Shape{1500, 700}, Shape{5120, 2880}, Shape{1u << 20, 17}}) {
        const TextureLayout layout(
            TextureShape{shape.width, shape.height, TileFormat::rgba8, {}, 2});
        std::uint64_t levels = 0;
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            levels += std::uint64_t(layout.mips[mip].width) * layout.mips[mip].height;
        }
        std::uint64_t pages = 0;
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            const std::uint64_t texels = layout.texels_in_page(page);
            EXPECT_GT(texels, 0u) << "page " << page;
            pages += texels;
            if (page == layout.tail_page()) continue;
            // The parent covers the page's centre, one level coarser.
            const std::uint64_t parent = parent_page(layout, page);
            EXPECT_EQ(page_position(layout, parent).mip,
                      std::min(page_position(layout, page).mip + 1, layout.tail_first_mip));
        }
        EXPECT_EQ(pages, levels) << shape.width << " x " << shape.height;
    }
    // A tile of mip 0 of 2^15 RGBA8 holds its 120 x 120 texels.
    const TextureLayout big(TextureShape{1u << 15, 1u << 15, TileFormat::rgba8, {}, 1});
    EXPECT_EQ(big.texels_in_page(0), 120u * 120u);
    EXPECT_EQ(big.mips[1].first_page, 274u * 274u);
}

TEST(TextureLayoutTileLevels, MoreTileLevelsThanATextureCanHaveAreNotValid) {
    EXPECT_TRUE((TextureShape{64, 64, TileFormat::rgba8, {}, max_mips}).valid());
    EXPECT_FALSE((TextureShape{64, 64, TileFormat::rgba8, {}, max_mips + 1}).valid());
    // Shapes that differ only in their tile levels are different shapes.
    EXPECT_NE((TextureShape{64, 64, TileFormat::rgba8, {}, 1}), (TextureShape{64, 64}));
    EXPECT_EQ((TextureShape{64, 64, TileFormat::rgba8, {}, 1}).untiled(), (TextureShape{64, 64}));
}

}  // namespace
}  // namespace vtpage::vt
