#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <vector>

#include "../bake/under_sanitizer.hpp"
#include "../support/backend_fixture.hpp"
#include "streaming/sources/bc1_encoder.hpp"
#include "streaming/sources/bc3_encoder.hpp"
#include "streaming/sources/procedural_pattern.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace vtpage::vt {
namespace {

std::uint32_t texel_at(const std::vector<std::byte>& tile, std::uint32_t tx, std::uint32_t ty) {
    std::uint32_t value;
    std::memcpy(&value, tile.data() + texel_offset(tx, ty), 4);
    return value;
}

std::vector<std::byte> tile_of(const ProceduralSource& source, std::uint32_t mip, std::uint32_t x,
                               std::uint32_t y) {
    std::vector<std::byte> tile(tile_bytes);
    source.fill_tile(mip, x, y, tile);
    return tile;
}

// Mip m of a procedural texture as a flat image, from its tiles' payloads.
std::vector<std::uint32_t> level_image(const ProceduralSource& source, std::uint32_t mip) {
    const TextureLayout layout = source.layout();
    const std::uint32_t size = layout.mips[mip].width;
    std::vector<std::uint32_t> image(std::size_t(size) * size);
    for (std::uint32_t ty = 0; ty < layout.mips[mip].tiles_y; ++ty) {
        for (std::uint32_t tx = 0; tx < layout.mips[mip].tiles_x; ++tx) {
            const auto tile = tile_of(source, mip, tx, ty);
            for (std::uint32_t y = 0; y < tile_payload && ty * tile_payload + y < size; ++y) {
                for (std::uint32_t x = 0; x < tile_payload && tx * tile_payload + x < size; ++x) {
                    image[std::size_t(ty * tile_payload + y) * size + tx * tile_payload + x] =
                        texel_at(tile, x + tile_border, y + tile_border);
                }
            }
        }
    }
    return image;
}

int channel(std::uint32_t texel, int c) { return int((texel >> (8 * c)) & 0xff); }

// The RGBA8 source of the same texture as a BC1 or BC3 one.
ProceduralSource rgba8_twin(std::uint32_t seed, std::uint32_t size_log2) {
    return ProceduralSource({.seed = seed, .size_log2 = size_log2, .format = TileFormat::rgba8});
}

// What a BC1 or BC3 tile must hold: the level's texels (here from the RGBA8 tiles' payloads) cut
// with the format's geometry (payload 248, border 4), each 4 x 4 block encoded.
std::vector<std::byte> expected_block_tile(TileFormat format,
                                           const std::vector<std::uint32_t>& level,
                                           std::uint32_t size, std::uint32_t x, std::uint32_t y) {
    const TileFormatInfo info = tile_format_info(format);
    std::vector<std::byte> tile(info.tile_bytes());
    for (std::uint32_t by = 0; by < info.blocks_per_row(); ++by) {
        for (std::uint32_t bx = 0; bx < info.blocks_per_row(); ++bx) {
            std::uint32_t texels[16];
            for (std::uint32_t i = 0; i < 16; ++i) {
                const std::uint32_t lx =
                    level_texel(x, 4 * bx + i % 4, size, info.tile_payload(), info.tile_border);
                const std::uint32_t ly =
                    level_texel(y, 4 * by + i / 4, size, info.tile_payload(), info.tile_border);
                texels[i] = level[std::size_t(ly) * size + lx];
            }
            const auto* bytes = reinterpret_cast<const std::uint8_t*>(texels);
            auto* out = reinterpret_cast<std::uint8_t*>(tile.data()) +
                        (by * info.blocks_per_row() + bx) * info.block_bytes;
            if (format == TileFormat::bc3) {
                std::memcpy(out, encode_bc3_block(bytes).bytes, 16);
            } else {
                std::memcpy(out, encode_bc1_block(bytes).bytes, 8);
            }
        }
    }
    return tile;
}

// The tile (mip, x, y) that slot `slot` of a page holds; has_tile is false for unused slots.
TileId tile_in_slot(const TextureLayout& layout, std::uint64_t page, std::uint32_t slot) {
    const PagePosition position = page_position(layout, page);
    if (layout.in_tail(position.mip)) return {0, layout.tail_first_mip + slot, 0, 0};
    const TileFormatInfo info = layout.tile_format();
    return {0, position.mip, position.x * info.page_tiles_x + slot % info.page_tiles_x,
            position.y * info.page_tiles_y + slot / info.page_tiles_x};
}

// Every tile slot of a BC1 or BC3 page against the RGBA8 texels encoded; unused slots zero.
// The pages whose every tile is compared: all of them, or under sanitizers (where the encoder's
// arithmetic runs ten times slower and repeats the same code) the first page of each level and
// the tail.
std::vector<std::uint64_t> pages_to_compare(const TextureLayout& layout) {
    std::vector<std::uint64_t> pages;
    for (std::uint64_t page = 0; page < layout.page_count; ++page) {
        const bool first_of_level =
            page == layout.tail_page() ||
            std::any_of(layout.mips, layout.mips + std::min(layout.mip_count, max_mips),
                        [&](const MipLevel& level) { return level.first_page == page; });
        if (!test::under_sanitizer || first_of_level) pages.push_back(page);
    }
    return pages;
}

void expect_block_page(const ProceduralSource& blocks, const ProceduralSource& rgba8,
                       std::uint64_t page) {
    const TextureLayout layout = blocks.layout();
    const TileFormatInfo info = layout.tile_format();
    const auto bytes = test::source_page(blocks, page);
    std::map<std::uint32_t, std::vector<std::uint32_t>> levels;  // by mip, made once
    for (std::uint32_t slot = 0; slot < info.tiles_per_page(); ++slot) {
        const TileId t = tile_in_slot(layout, page, slot);
        const auto* got = bytes.data() + std::size_t(slot) * info.tile_bytes();
        if (!layout.has_tile(t.mip, t.x, t.y)) {
            const std::vector<std::byte> zeros(info.tile_bytes());
            ASSERT_EQ(std::memcmp(got, zeros.data(), zeros.size()), 0) << "slot " << slot;
            continue;
        }
        if (!levels.count(t.mip)) levels[t.mip] = level_image(rgba8, t.mip);
        const auto expected =
            expected_block_tile(layout.format, levels[t.mip], layout.mips[t.mip].width, t.x, t.y);
        ASSERT_EQ(std::memcmp(got, expected.data(), expected.size()), 0)
            << "page " << page << " slot " << slot << ": mip " << t.mip << " tile " << t.x << ","
            << t.y;
    }
}

TEST(ProceduralSourceTest, TilesMatchTheSingleTexelReference) {
    const ProceduralSource source({.seed = 11, .size_log2 = 12});
    const TextureLayout layout = source.layout();
    struct Case {
        std::uint32_t mip, x, y;
    };
    // Inner, edge and corner tiles of several mips, and tail levels.
    for (Case c : {Case{0, 0, 0}, Case{0, 17, 3}, Case{0, 34, 34}, Case{2, 4, 8}, Case{5, 0, 0},
                   Case{6, 0, 0}, Case{12, 0, 0}}) {
        const auto tile = tile_of(source, c.mip, c.x, c.y);
        const std::uint32_t size = layout.mips[c.mip].width;
        for (std::uint32_t ty = 0; ty < tile_size; ty += 3) {
            for (std::uint32_t tx = 0; tx < tile_size; ++tx) {
                const std::uint32_t expected = procedural::texel(
                    11, 12, c.mip, level_texel(c.x, tx, size), level_texel(c.y, ty, size));
                ASSERT_EQ(texel_at(tile, tx, ty), expected)
                    << "mip " << c.mip << " tile " << c.x << "," << c.y << " texel " << tx << ","
                    << ty;
            }
        }
    }
}

TEST(ProceduralSourceTest, BordersEqualTheNeighboursTexels) {
    const ProceduralSource source({.seed = 5, .size_log2 = 11});
    const auto left = tile_of(source, 0, 3, 2);
    const auto right = tile_of(source, 0, 4, 2);
    const auto below = tile_of(source, 0, 3, 3);
    for (std::uint32_t t = 0; t < tile_size; ++t) {
        for (std::uint32_t b = 0; b < 2 * tile_border; ++b) {
            // The last 8 columns of `left` are the first 8 of `right` (4 payload + 4 border).
            EXPECT_EQ(texel_at(left, tile_payload + b, t), texel_at(right, b, t));
            EXPECT_EQ(texel_at(left, t, tile_payload + b), texel_at(below, t, b));
        }
    }
    // At the texture's edge the border repeats the edge texel.
    const auto corner = tile_of(source, 0, 0, 0);
    for (std::uint32_t b = 0; b < tile_border; ++b) {
        EXPECT_EQ(texel_at(corner, b, 40), texel_at(corner, tile_border, 40));
    }
}

TEST(ProceduralSourceTest, PagesAreDeterministicAndDifferBySeed) {
    const ProceduralSource a({.seed = 1, .size_log2 = 10});
    const ProceduralSource again({.seed = 1, .size_log2 = 10});
    const ProceduralSource b({.seed = 2, .size_log2 = 10});
    for (std::uint64_t page : {std::uint64_t(0), std::uint64_t(3), a.layout().tail_page()}) {
        EXPECT_EQ(test::source_page(a, page), test::source_page(again, page));
        EXPECT_NE(test::source_page(a, page), test::source_page(b, page));
    }
    // Unused tile slots are zero: page 0 of a 2^10 texture has 8 x 4 slots for 9 x 9 tiles,
    // all used; the tail page uses one slot per tail level.
    const auto tail = test::source_page(a, a.layout().tail_page());
    const std::uint32_t tail_levels = a.layout().mip_count - a.layout().tail_first_mip;
    for (std::size_t i = std::size_t(tail_levels) * tile_bytes; i < page_bytes; i += 997) {
        ASSERT_EQ(tail[i], std::byte{0}) << "byte " << i;
    }
    EXPECT_NE(test::hash_of(tail), 0u);
}

TEST(ProceduralSourceTest, MipsAreConsistentAndDetailedAtEveryLevel) {
    const ProceduralSource source({.seed = 3, .size_log2 = 9});
    const ProceduralSource other({.seed = 4, .size_log2 = 9});
    for (std::uint32_t mip = 0; mip + 1 < 7; ++mip) {
        const auto fine = level_image(source, mip);
        const auto coarse = level_image(source, mip + 1);
        const auto unrelated = level_image(other, mip + 1);
        const std::uint32_t size = 512u >> (mip + 1);
        double error = 0, baseline = 0;
        std::size_t differing_neighbours = 0;
        for (std::uint32_t y = 0; y < size; ++y) {
            for (std::uint32_t x = 0; x < size; ++x) {
                for (int c = 0; c < 3; ++c) {
                    const std::size_t f = std::size_t(2 * y) * (2 * size) + 2 * x;
                    const int box =
                        (channel(fine[f], c) + channel(fine[f + 1], c) +
                         channel(fine[f + 2 * size], c) + channel(fine[f + 2 * size + 1], c) + 2) /
                        4;
                    error += std::abs(box - channel(coarse[std::size_t(y) * size + x], c));
                    baseline += std::abs(box - channel(unrelated[std::size_t(y) * size + x], c));
                }
                if (x + 1 < size &&
                    coarse[std::size_t(y) * size + x] != coarse[std::size_t(y) * size + x + 1]) {
                    ++differing_neighbours;
                }
            }
        }
        const double texels = double(size) * size * 3;
        // The coarser mip is close to the box filter of the finer one, far closer than an
        // unrelated texture is.
        EXPECT_LT(error / texels, 12.0) << "mip " << mip + 1;
        EXPECT_LT(error, baseline / 3) << "mip " << mip + 1;
        // Texel-scale detail: most neighbours differ.
        EXPECT_GT(double(differing_neighbours) / (double(size) * (size - 1)), 0.5)
            << "mip " << mip + 1;
    }
}

TEST(ProceduralSourceTest, RefusesBadArguments) {
    EXPECT_THROW(ProceduralSource({.seed = 1, .size_log2 = 21}), Error);
    const ProceduralSource source({.seed = 1, .size_log2 = 8});
    std::vector<std::byte> page(page_bytes);
    EXPECT_THROW(source.fill_host(source.layout().page_count, page), Error);
    std::vector<std::byte> small(100);
    EXPECT_THROW(source.fill_host(0, small), Error);
    // Formats other than RGBA8, BC1 and BC3 are refused by name.
    for (TileFormat format : {TileFormat::bc4, TileFormat::bc5, TileFormat(9)}) {
        try {
            ProceduralSource bad({.seed = 1, .size_log2 = 8, .format = format});
            ADD_FAILURE() << tile_format_name(format) << " was taken";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
            EXPECT_NE(std::string(error.what()).find(tile_format_name(format)), std::string::npos)
                << error.what();
        }
    }
    // A BC1 tile is 32 KiB: less is refused.
    const ProceduralSource bc1({.seed = 1, .size_log2 = 10, .format = TileFormat::bc1});
    std::vector<std::byte> short_tile(tile_format_info(TileFormat::bc1).tile_bytes() - 1);
    EXPECT_THROW(bc1.fill_tile(0, 0, 0, short_tile), Error);
}

TEST(ProceduralSourceTest, BlockFormatShapesAreTheSameSquare) {
    const ProceduralSource bc1({.seed = 4, .size_log2 = 12, .format = TileFormat::bc1});
    const ProceduralSource bc3({.seed = 4, .size_log2 = 12, .format = TileFormat::bc3});
    EXPECT_EQ(bc1.shape(), (TextureShape{4096, 4096, TileFormat::bc1}));
    EXPECT_EQ(bc3.shape(), (TextureShape{4096, 4096, TileFormat::bc3}));
    EXPECT_EQ(ProceduralSource({.seed = 4, .size_log2 = 12}).shape(), TextureShape::square(12));
    EXPECT_NE(bc1.name(), rgba8_twin(4, 12).name());
    EXPECT_NE(bc3.name(), rgba8_twin(4, 12).name());
    EXPECT_NE(bc3.name(), bc1.name());
}

// Every page of a BC1 texture (4 pages of mip 0, one each of mips 1 to 3, the tail): each tile
// is the RGBA8 texture's texels of the same level, cut with BC1's geometry and encoded.
TEST(ProceduralSourceTest, Bc1PagesEncodeTheRgba8TexelsInBc1Geometry) {
    const ProceduralSource bc1({.seed = 6, .size_log2 = 11, .format = TileFormat::bc1});
    const ProceduralSource rgba8 = rgba8_twin(6, 11);
    const TextureLayout layout = bc1.layout();
    ASSERT_EQ(layout.mips[0].tiles_x, 9u);  // 2048 / 248: the last tile part outside
    ASSERT_EQ(layout.page_count, 8u);
    for (std::uint64_t page : pages_to_compare(layout)) {
        ASSERT_NO_FATAL_FAILURE(expect_block_page(bc1, rgba8, page));
    }
    // fill_tile writes what the page holds in the tile's slot.
    std::vector<std::byte> tile(tile_format_info(TileFormat::bc1).tile_bytes());
    bc1.fill_tile(0, 8, 3, tile);
    const TileLocation where = layout.locate(0, 8, 3);
    const auto page = test::source_page(bc1, where.page);
    EXPECT_EQ(std::memcmp(page.data() + where.byte_offset(), tile.data(), tile.size()), 0);
}

// The tail page of BC1 holds the levels of 128 texels and less (256 does not fit a 248 payload),
// one per slot, each the encoded RGBA8 texels; the other 56 slots are zero.
TEST(ProceduralSourceTest, Bc1TailPage) {
    const ProceduralSource bc1({.seed = 8, .size_log2 = 14, .format = TileFormat::bc1});
    const TextureLayout layout = bc1.layout();
    ASSERT_EQ(layout.tail_first_mip, 7u);
    ASSERT_EQ(layout.mips[7].width, 128u);
    expect_block_page(bc1, rgba8_twin(8, 14), layout.tail_page());
    // A texture that is all tail.
    const ProceduralSource tiny({.seed = 8, .size_log2 = 6, .format = TileFormat::bc1});
    ASSERT_EQ(tiny.layout().page_count, 1u);
    expect_block_page(tiny, rgba8_twin(8, 6), 0);
}

// Every page of a BC3 texture (6 pages of mip 0 at 8 x 4 tiles a page, 2 of mip 1, one each of
// mips 2 and 3, the tail): each tile is the RGBA8 texture's texels of the same level, cut with
// BC3's geometry (BC1's) and encoded with the BC3 encoder; the tail page as BC1's, 24 slots zero.
TEST(ProceduralSourceTest, Bc3PagesEncodeTheRgba8TexelsInBc3Geometry) {
    const ProceduralSource bc3({.seed = 6, .size_log2 = 11, .format = TileFormat::bc3});
    const ProceduralSource rgba8 = rgba8_twin(6, 11);
    const TextureLayout layout = bc3.layout();
    ASSERT_EQ(layout.mips[0].tiles_x, 9u);
    ASSERT_EQ(layout.page_count, 11u);
    for (std::uint64_t page : pages_to_compare(layout)) {
        ASSERT_NO_FATAL_FAILURE(expect_block_page(bc3, rgba8, page));
    }
    const ProceduralSource tiny({.seed = 8, .size_log2 = 6, .format = TileFormat::bc3});
    expect_block_page(tiny, rgba8_twin(8, 6), 0);
}

// The terrain is opaque: every alpha block of a BC3 tile is 255 throughout (both endpoints 255,
// every code 0), and the colour blocks are the BC1 tile's blocks, in 4-colour order.
TEST(ProceduralSourceTest, Bc3TilesAreOpaqueWithBc1sColour) {
    const ProceduralSource bc3({.seed = 2, .size_log2 = 12, .format = TileFormat::bc3});
    const ProceduralSource bc1({.seed = 2, .size_log2 = 12, .format = TileFormat::bc1});
    const TileFormatInfo info = tile_format_info(TileFormat::bc3);
    std::vector<std::byte> bc3_tile(info.tile_bytes());
    std::vector<std::byte> bc1_tile(tile_format_info(TileFormat::bc1).tile_bytes());
    bc3.fill_tile(1, 3, 2, bc3_tile);
    bc1.fill_tile(1, 3, 2, bc1_tile);
    const std::array<std::byte, 8> opaque = {std::byte{255}, std::byte{255}};
    for (std::uint32_t block = 0; block < info.blocks_per_row() * info.blocks_per_row(); ++block) {
        const std::byte* bytes = bc3_tile.data() + std::size_t(block) * 16;
        ASSERT_EQ(std::memcmp(bytes, opaque.data(), 8), 0) << "block " << block;
        ASSERT_EQ(std::memcmp(bytes + 8, bc1_tile.data() + std::size_t(block) * 8, 8), 0)
            << "block " << block;
    }
}

// Payload texels per page, counted from the layouts: page 0 of mip 0 of a 2^20 texture (full),
// and all texels of all levels over all pages.
TEST(ProceduralSourceTest, Bc1PagesHold8Point5AndBc3Pages4Point3TimesTheTexels) {
    const auto full_page_texels = [](const TextureLayout& layout) {
        const TileFormatInfo info = layout.tile_format();
        std::uint64_t texels = 0;
        for (std::uint32_t slot = 0; slot < info.tiles_per_page(); ++slot) {
            const TileId t = tile_in_slot(layout, 0, slot);
            const std::uint64_t w =
                std::min(info.tile_payload(), layout.width - t.x * info.tile_payload());
            const std::uint64_t h =
                std::min(info.tile_payload(), layout.height - t.y * info.tile_payload());
            texels += w * h;
        }
        return texels;
    };
    const auto texels_per_page = [](const TextureLayout& layout) {
        double texels = 0;
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            texels += double(layout.mips[mip].width) * layout.mips[mip].height;
        }
        return texels / double(layout.page_count);
    };
    const TextureLayout rgba8 = ProceduralSource({.seed = 1, .size_log2 = 20}).layout();
    const TextureLayout bc1 =
        ProceduralSource({.seed = 1, .size_log2 = 20, .format = TileFormat::bc1}).layout();
    const TextureLayout bc3 =
        ProceduralSource({.seed = 1, .size_log2 = 20, .format = TileFormat::bc3}).layout();
    EXPECT_EQ(full_page_texels(rgba8), 460800u);
    EXPECT_EQ(full_page_texels(bc1), 3936256u);
    EXPECT_EQ(full_page_texels(bc3), 1968128u);
    EXPECT_NEAR(double(full_page_texels(bc1)) / double(full_page_texels(rgba8)), 8.54, 0.005);
    EXPECT_NEAR(double(full_page_texels(bc3)) / double(full_page_texels(rgba8)), 4.27, 0.005);
    // With the padding of the last tiles and pages of each level.
    EXPECT_NEAR(texels_per_page(bc1) / texels_per_page(rgba8), 8.54, 0.02);
    EXPECT_NEAR(texels_per_page(bc3) / texels_per_page(rgba8), 4.27, 0.02);
}

// The CUDA kernel writes the same bytes as the CPU code, for pages of every kind: inner and edge
// pages of several mips, the tail, and far corners of the largest texture, in RGBA8, BC1 and BC3.
TEST(ProceduralSourceGpuTest, CudaKernelBytesEqualCpuBytes) {
    VTPAGE_BACKEND_OR_SKIP(backend, "cuda");
    if (!device_fills_built()) GTEST_SKIP() << "built without CUDA";
    PageTableSettings settings;
    settings.region_size = 1_GiB;
    settings.budget_bytes = 192 * page_bytes;
    settings.map_into_region = false;
    settings.pool.map_windows = true;
    settings.pool.window_pages = 192;
    PageTable table(*backend, settings);

    struct Case {
        std::shared_ptr<ProceduralSource> source;
        std::uint64_t page;
    };
    auto big = std::make_shared<ProceduralSource>(ProceduralSettings{.seed = 77, .size_log2 = 20});
    auto mid = std::make_shared<ProceduralSource>(ProceduralSettings{.seed = 9, .size_log2 = 13});
    auto tiny = std::make_shared<ProceduralSource>(ProceduralSettings{.seed = 2, .size_log2 = 5});
    auto big_bc1 = std::make_shared<ProceduralSource>(
        ProceduralSettings{.seed = 77, .size_log2 = 20, .format = TileFormat::bc1});
    auto small_bc1 = std::make_shared<ProceduralSource>(
        ProceduralSettings{.seed = 9, .size_log2 = 12, .format = TileFormat::bc1});
    auto big_bc3 = std::make_shared<ProceduralSource>(
        ProceduralSettings{.seed = 77, .size_log2 = 20, .format = TileFormat::bc3});
    auto small_bc3 = std::make_shared<ProceduralSource>(
        ProceduralSettings{.seed = 9, .size_log2 = 12, .format = TileFormat::bc3});
    const TextureLayout big_layout = big->layout(), mid_layout = mid->layout();
    const TextureLayout big_bc1_layout = big_bc1->layout(), big_bc3_layout = big_bc3->layout();
    std::vector<Case> cases = {
        {big, 0},
        {big,
         big_layout.locate(0, big_layout.mips[0].tiles_x - 1, big_layout.mips[0].tiles_x - 1).page},
        {big, big_layout.locate(0, 4000, 2000).page},
        {big, big_layout.locate(7, 30, 50).page},
        {big, big_layout.locate(13, 1, 1).page},
        {big, big_layout.tail_page()},
        {tiny, 0},
    };
    // More than one launch's worth (96 pages) of one texture in one call.
    for (std::uint64_t page = 0; page < mid_layout.page_count; page += 2)
        cases.push_back({mid, page});
    cases.push_back({mid, mid_layout.tail_page()});
    // BC1: every page of a small texture (17: edge pages with unused slots, the tail), and the
    // far corner and the tail of the largest.
    for (std::uint64_t page = 0; page < small_bc1->layout().page_count; ++page)
        cases.push_back({small_bc1, page});
    const std::uint32_t last_bc1_tile = big_bc1_layout.mips[0].tiles_x - 1;
    cases.push_back({big_bc1, big_bc1_layout.locate(0, last_bc1_tile, last_bc1_tile).page});
    cases.push_back({big_bc1, big_bc1_layout.locate(6, 100, 7).page});
    cases.push_back({big_bc1, big_bc1_layout.tail_page()});
    // BC3 the same way: every page of a small texture (26), a far corner, a middle and the tail.
    for (std::uint64_t page = 0; page < small_bc3->layout().page_count; ++page)
        cases.push_back({small_bc3, page});
    const std::uint32_t last_bc3_tile = big_bc3_layout.mips[0].tiles_x - 1;
    cases.push_back({big_bc3, big_bc3_layout.locate(0, last_bc3_tile, last_bc3_tile).page});
    cases.push_back({big_bc3, big_bc3_layout.locate(6, 100, 7).page});
    cases.push_back({big_bc3, big_bc3_layout.tail_page()});

    std::vector<PageIndex> pages(cases.size());
    std::iota(pages.begin(), pages.end(), PageIndex(0));
    table.commit(pages);
    DeviceFillContext context(backend->capabilities().device);
    context.begin_batch();
    std::map<const ProceduralSource*, std::vector<DevicePageFill>> fills;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        // Poison first, so that a page the kernel skipped shows.
        std::vector<std::byte> poison(page_bytes, std::byte{0xcd});
        backend->write(table.data_address(pages[i]), poison.data(), poison.size());
        fills[cases[i].source.get()].push_back({cases[i].page, table.data_address(pages[i])});
    }
    for (const auto& [source, list] : fills) source->fill_device(list, context);
    context.wait(context.end_batch());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto gpu = test::read_device_page(*backend, table.data_address(pages[i]));
        const auto cpu = test::source_page(*cases[i].source, cases[i].page);
        ASSERT_EQ(test::hash_of(gpu), test::hash_of(cpu))
            << cases[i].source->name() << " page " << cases[i].page;
        ASSERT_EQ(gpu, cpu);
    }
}

}  // namespace
}  // namespace vtpage::vt
