// Every format through the version-2 bake and back through BakedFileSource: each tile decodes
// (decode_tile) close to the in-core reference level (exactly, for rgba8), each border equals
// the neighbour's texels, and the slots the layout leaves empty are zero.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "../support/temporary_folder.hpp"
#include "bake_archive_test_support.hpp"
#include "block_codec.hpp"
#include "page_assembler.hpp"
#include "texture_baker.hpp"
#include "vips_image_reader.hpp"
#include "vips_under_thread_sanitizer.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace vtpage::bake {
namespace {

using vt::TileFormat;

// The least PSNR (dB) a tile of each format keeps of the photo-like test image: its coarse levels
// are mostly noise and waves a few texels long, what block compression keeps worst (bc1 and bc3
// measure 22 to 23 dB there, bc4 and bc5 35; the fine levels 30 to 46).
double psnr_bound(TileFormat format) {
    switch (format) {
        case TileFormat::bc1:
        case TileFormat::bc3:
            return 20;
        case TileFormat::bc4:
        case TileFormat::bc5:
            return 32;
        default:
            return INFINITY;
    }
}

// PSNR over the channels the format keeps, for the payload texels of tile (x, y) that lie inside
// the level (the border and the texels clamped past the edge repeat texels counted elsewhere).
double tile_psnr(TileFormat format, const vt::MipLevel& level, std::uint32_t x, std::uint32_t y,
                 const std::vector<std::uint8_t>& want, const std::vector<std::uint8_t>& got) {
    const vt::TileFormatInfo info = vt::tile_format_info(format);
    const unsigned channels = format == TileFormat::bc1   ? 3
                              : format == TileFormat::bc4 ? 1
                              : format == TileFormat::bc5 ? 2
                                                          : 4;
    const std::uint32_t p = info.tile_payload(), b = info.tile_border;
    double error = 0;
    std::size_t samples = 0;
    for (std::uint32_t ty = b; ty < b + std::min(p, level.height - y * p); ++ty) {
        for (std::uint32_t tx = b; tx < b + std::min(p, level.width - x * p); ++tx) {
            const std::size_t i = (std::size_t(ty) * info.tile_size + tx) * 4;
            for (unsigned c = 0; c < channels; ++c) {
                const double d = double(want[i + c]) - got[i + c];
                error += d * d;
                ++samples;
            }
        }
    }
    return error == 0 ? INFINITY : 10 * std::log10(255.0 * 255 / (error / double(samples)));
}

class TextureArchiveRoundTrip : public testing::TestWithParam<TileFormat> {
protected:
    void SetUp() override { VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER(); }
    // Bakes a photo-like RGBA image of width x height; returns its reference levels.
    std::vector<test::ReferenceLevel> bake(std::uint32_t width, std::uint32_t height) {
        const test::SampleImage image = test::photo_like(width, height, 4, width + height);
        const std::string png = folder_.file("image.png");
        test::save_image(image, png, test::save_png);
        VipsImageReader reader(png);
        TextureBakeSettings settings;
        settings.format = GetParam();
        settings.threads = 3;
        report_ = bake_texture_archive(reader, path(), settings);
        return test::reference_levels({width, height, image.bytes});
    }
    std::string path() { return folder_.file("image.vtex"); }

    std::vector<std::uint8_t> decoded_tile(const vt::BakedFileSource& source, std::uint32_t mip,
                                           std::uint32_t x, std::uint32_t y) {
        const vt::TextureLayout layout(source.shape());
        const vt::TileLocation where = layout.locate(mip, x, y);
        auto& page = pages_[where.page];
        if (page.empty()) {
            page.resize(vt::format_page_bytes);
            source.fill_host(where.page, page);
        }
        const vt::TileFormatInfo info = layout.tile_format();
        std::vector<std::uint8_t> rgba(std::size_t(info.tile_size) * info.tile_size * 4);
        decode_tile(layout.format, std::span(page).subspan(where.byte_offset(), where.tile_bytes),
                    rgba);
        return rgba;
    }

    void expect_tiles_match(const std::vector<test::ReferenceLevel>& levels);
    void expect_borders_match_neighbours(const vt::BakedFileSource& source);
    void expect_empty_slots_zero(const vt::BakedFileSource& source);

    test::TemporaryFolder folder_;
    TextureBakeReport report_;
    std::map<std::uint64_t, std::vector<std::byte>> pages_;
};

// The reference texels of a tile: level_texel clamps rows and columns alike.
std::vector<std::uint8_t> reference_tile(const test::ReferenceLevel& level,
                                         const vt::TileFormatInfo& info, std::uint32_t x,
                                         std::uint32_t y) {
    std::vector<std::uint8_t> rgba(std::size_t(info.tile_size) * info.tile_size * 4);
    const std::uint32_t p = info.tile_payload(), b = info.tile_border;
    for (std::uint32_t ty = 0; ty < info.tile_size; ++ty) {
        for (std::uint32_t tx = 0; tx < info.tile_size; ++tx) {
            const std::uint8_t* texel = level.at(vt::level_texel(x, tx, level.width, p, b),
                                                 vt::level_texel(y, ty, level.height, p, b));
            std::memcpy(&rgba[(std::size_t(ty) * info.tile_size + tx) * 4], texel, 4);
        }
    }
    return rgba;
}

void TextureArchiveRoundTrip::expect_tiles_match(const std::vector<test::ReferenceLevel>& levels) {
    const vt::BakedFileSource source(path());
    ASSERT_EQ(source.version(), 4);
    const vt::TextureLayout layout(source.shape());
    ASSERT_EQ(layout.mip_count, levels.size());
    const TileFormat format = GetParam();
    double least = INFINITY;
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                const auto want = reference_tile(levels[mip], layout.tile_format(), x, y);
                const auto got = decoded_tile(source, mip, x, y);
                if (format == TileFormat::rgba8) {
                    ASSERT_EQ(got, want) << "mip " << mip << " tile " << x << "," << y;
                }
                const double psnr = tile_psnr(format, layout.mips[mip], x, y, want, got);
                least = std::min(least, psnr);
                EXPECT_GE(psnr, psnr_bound(format)) << "mip " << mip << " tile " << x << "," << y;
            }
        }
    }
    std::printf("%s %u x %u: least tile PSNR %.2f dB\n", vt::tile_format_name(format), layout.width,
                layout.height, least);
    expect_borders_match_neighbours(source);
    expect_empty_slots_zero(source);
}

// Tile x's columns [P, P + 2B) are the texels of tile x + 1's [0, 2B); rows likewise.
void TextureArchiveRoundTrip::expect_borders_match_neighbours(const vt::BakedFileSource& source) {
    const vt::TextureLayout layout(source.shape());
    const vt::TileFormatInfo info = layout.tile_format();
    const std::uint32_t p = info.tile_payload(), span = 2 * info.tile_border, n = info.tile_size;
    for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
        for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                const auto tile = decoded_tile(source, mip, x, y);
                if (x + 1 < layout.mips[mip].tiles_x) {
                    const auto right = decoded_tile(source, mip, x + 1, y);
                    for (std::uint32_t i = 0; i < n; ++i) {
                        ASSERT_EQ(std::memcmp(&tile[(i * n + p) * 4], &right[i * n * 4], span * 4),
                                  0)
                            << "mip " << mip << " tile " << x << "," << y << " row " << i;
                    }
                }
                if (y + 1 < layout.mips[mip].tiles_y) {
                    const auto below = decoded_tile(source, mip, x, y + 1);
                    ASSERT_EQ(std::memcmp(&tile[p * n * 4], below.data(), span * n * 4), 0)
                        << "mip " << mip << " tile " << x << "," << y << ": the rows below";
                }
            }
        }
    }
}

void TextureArchiveRoundTrip::expect_empty_slots_zero(const vt::BakedFileSource& source) {
    const vt::TextureLayout layout(source.shape());
    const vt::TileFormatInfo info = layout.tile_format();
    std::vector<std::byte> page(vt::format_page_bytes);
    for (std::uint64_t p = 0; p < layout.page_count; ++p) {
        source.fill_host(p, page);
        std::vector<bool> used(info.tiles_per_page(), false);
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
                for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                    const vt::TileLocation where = layout.locate(mip, x, y);
                    if (where.page == p) used[where.tile_in_page] = true;
                }
            }
        }
        std::uint32_t count = 0;
        for (std::uint32_t t = 0; t < info.tiles_per_page(); ++t) {
            count += used[t];
            if (used[t]) continue;
            const auto slot =
                std::span(page).subspan(std::size_t(t) * info.tile_bytes(), info.tile_bytes());
            ASSERT_TRUE(std::all_of(slot.begin(), slot.end(),
                                    [](std::byte b) { return b == std::byte{0}; }))
                << "page " << p << " slot " << t;
        }
        EXPECT_EQ(count, PageAssembler::tiles_in_page(layout, p)) << "page " << p;
    }
}

TEST_P(TextureArchiveRoundTrip, OneTexel) { expect_tiles_match(bake(1, 1)); }
TEST_P(TextureArchiveRoundTrip, ThreeByFive) { expect_tiles_match(bake(3, 5)); }
TEST_P(TextureArchiveRoundTrip, OddTallImage) { expect_tiles_match(bake(241, 481)); }

TEST_P(TextureArchiveRoundTrip, ThousandBySevenHundred) {
    const auto levels = bake(1000, 700);
    expect_tiles_match(levels);
    EXPECT_EQ(report_.shape, (vt::TextureShape{1000, 700, GetParam()}));
    EXPECT_EQ(report_.levels.size(), levels.size());
    for (const LevelQuality& level : report_.levels) {
        if (GetParam() == TileFormat::rgba8) {
            EXPECT_TRUE(level.exact()) << "mip " << level.mip;
        } else {
            EXPECT_GE(level.psnr(), psnr_bound(GetParam())) << "mip " << level.mip;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, TextureArchiveRoundTrip,
                         testing::Values(TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3,
                                         TileFormat::bc4, TileFormat::bc5),
                         [](const testing::TestParamInfo<TileFormat>& param) {
                             return std::string(vt::tile_format_name(param.param));
                         });

}  // namespace
}  // namespace vtpage::bake
