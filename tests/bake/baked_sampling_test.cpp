// What a bake does with the sampling it records: every texel of every tile of every level (mip
// tails included; packed coarse levels are those levels' tiles) holds the reference level's texel
// at the tile's coordinates mapped in by the address modes (vt::address_texel), for each pair of
// modes in u and v; and an sRGB texture's levels are the linear-light box filter of the level
// above, within 1/255, where a linear texture's are not. RGBA8, so that the file holds the
// levels themselves.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <tuple>

#include "../support/temporary_folder.hpp"
#include "bake_archive_test_support.hpp"
#include "texture_baker.hpp"
#include "vips_image_reader.hpp"
#include "vips_under_thread_sanitizer.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace vtpage::bake {
namespace {

using vt::AddressMode;

constexpr AddressMode modes[] = {AddressMode::clamp_to_edge, AddressMode::repeat,
                                 AddressMode::mirrored_repeat};

// The tiles of a baked file, read once each.
class BakedTiles {
public:
    explicit BakedTiles(const std::string& path) : source_(path), layout_(source_.shape()) {}
    const vt::TextureLayout& layout() const { return layout_; }
    const vt::BakedFileSource& source() const { return source_; }

    // Texel (tx, ty) of tile (x, y) of mip, border included.
    const std::byte* texel(std::uint32_t mip, std::uint32_t x, std::uint32_t y, std::uint32_t tx,
                           std::uint32_t ty) {
        const vt::TileLocation where = layout_.locate(mip, x, y);
        auto& page = pages_[where.page];
        if (page.empty()) {
            page.resize(vt::format_page_bytes);
            source_.fill_host(where.page, page);
        }
        return page.data() + where.byte_offset() + vt::texel_offset(tx, ty);
    }

private:
    vt::BakedFileSource source_;
    vt::TextureLayout layout_;
    std::map<std::uint64_t, std::vector<std::byte>> pages_;
};

// The texels of every tile of every level that differ from the reference level read through the
// address modes given (border and payload alike; past the level's edge, the payload's padding
// reads as the modes say too).
std::uint64_t texels_unlike(BakedTiles& tiles, const std::vector<test::ReferenceLevel>& levels,
                            AddressMode address_u, AddressMode address_v) {
    const vt::TextureLayout& layout = tiles.layout();
    const std::uint32_t p = vt::tile_payload, b = vt::tile_border;
    std::uint64_t unlike = 0;
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        const test::ReferenceLevel& level = levels.at(mip);
        for (std::uint32_t y = 0; y < layout.mips[mip].tiles_y; ++y) {
            for (std::uint32_t x = 0; x < layout.mips[mip].tiles_x; ++x) {
                for (std::uint32_t ty = 0; ty < vt::tile_size; ++ty) {
                    const std::uint32_t ly =
                        vt::address_texel(address_v, std::int64_t(y) * p + ty - b, level.height);
                    for (std::uint32_t tx = 0; tx < vt::tile_size; ++tx) {
                        const std::uint32_t lx =
                            vt::address_texel(address_u, std::int64_t(x) * p + tx - b, level.width);
                        unlike +=
                            std::memcmp(tiles.texel(mip, x, y, tx, ty), level.at(lx, ly), 4) != 0;
                    }
                }
            }
        }
    }
    return unlike;
}

class BakedSampling : public testing::Test {
protected:
    void SetUp() override { VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER(); }

    // Bakes the RGBA image as rgba8 with the sampling given; returns the file's path.
    std::string bake(const test::SampleImage& image, const vt::TextureSampling& sampling) {
        const std::string png = folder_.file("image.png");
        test::save_image(image, png, test::save_png);
        VipsImageReader reader(png);
        TextureBakeSettings settings;
        settings.format = vt::TileFormat::rgba8;
        settings.threads = 2;
        settings.sampling = sampling;
        const std::string path = folder_.file("image.vtex");
        bake_texture_archive(reader, path, settings);
        return path;
    }

    test::TemporaryFolder folder_;
};

// The sizes: odd both ways, one row of tiles many texels wide, one texel, and larger than a tile
// both ways (several bands and tiles on the first levels, a tail below).
constexpr std::uint32_t sizes[][2] = {{37, 23}, {300, 5}, {1, 1}, {301, 263}};

TEST_F(BakedSampling, EveryTileFollowsTheAddressModes) {
    for (const auto& [width, height] : sizes) {
        const test::SampleImage image = test::photo_like(width, height, 4, width * 3 + height);
        const auto levels = test::reference_levels({width, height, image.bytes});
        for (const AddressMode address_u : modes) {
            for (const AddressMode address_v : modes) {
                const std::string path =
                    bake(image, {address_u, address_v, vt::ColorSpace::linear});
                BakedTiles tiles(path);
                EXPECT_EQ(tiles.source().sampling(),
                          (vt::TextureSampling{address_u, address_v, vt::ColorSpace::linear}));
                EXPECT_EQ(texels_unlike(tiles, levels, address_u, address_v), 0u)
                    << width << " x " << height << ", " << vt::address_mode_name(address_u) << " x "
                    << vt::address_mode_name(address_v);
            }
        }
    }
}

// The check above sees a mode that is ignored: a file baked with repeat or mirrored repeat is
// unlike the same image's levels read with clamped borders, and the other way round.
TEST_F(BakedSampling, AnIgnoredModeIsSeen) {
    const std::uint32_t width = 301, height = 263;
    const test::SampleImage image = test::photo_like(width, height, 4, 5);
    const auto levels = test::reference_levels({width, height, image.bytes});
    for (const AddressMode mode : {AddressMode::repeat, AddressMode::mirrored_repeat}) {
        BakedTiles repeat_u(bake(image, {mode, AddressMode::clamp_to_edge, {}}));
        EXPECT_GT(
            texels_unlike(repeat_u, levels, AddressMode::clamp_to_edge, AddressMode::clamp_to_edge),
            0u)
            << vt::address_mode_name(mode) << " in u";
        BakedTiles repeat_v(bake(image, {AddressMode::clamp_to_edge, mode, {}}));
        EXPECT_GT(
            texels_unlike(repeat_v, levels, AddressMode::clamp_to_edge, AddressMode::clamp_to_edge),
            0u)
            << vt::address_mode_name(mode) << " in v";
        EXPECT_GT(texels_unlike(repeat_v, levels, AddressMode::clamp_to_edge,
                                mode == AddressMode::repeat ? AddressMode::mirrored_repeat
                                                            : AddressMode::repeat),
                  0u);
    }
    BakedTiles clamped(bake(image, {}));
    EXPECT_GT(texels_unlike(clamped, levels, AddressMode::repeat, AddressMode::repeat), 0u);
}

// Level mip of a baked file, from its tiles' payloads.
test::ReferenceLevel level_of(BakedTiles& tiles, std::uint32_t mip) {
    const vt::MipLevel& shape = tiles.layout().mips[mip];
    test::ReferenceLevel level{
        shape.width, shape.height,
        std::vector<std::uint8_t>(std::size_t(shape.width) * shape.height * 4)};
    for (std::uint32_t y = 0; y < shape.height; ++y) {
        for (std::uint32_t x = 0; x < shape.width; ++x) {
            std::memcpy(&level.texels[(std::size_t(y) * shape.width + x) * 4],
                        tiles.texel(mip, x / vt::tile_payload, y / vt::tile_payload,
                                    x % vt::tile_payload + vt::tile_border,
                                    y % vt::tile_payload + vt::tile_border),
                        4);
        }
    }
    return level;
}

// The most a colour channel (or alpha) of two levels differs.
int largest_difference(const test::ReferenceLevel& a, const test::ReferenceLevel& b, bool alpha) {
    int largest = 0;
    for (std::size_t i = 0; i < a.texels.size(); ++i) {
        if ((i % 4 == 3) != alpha) continue;
        largest = std::max(largest, std::abs(int(a.texels[i]) - int(b.texels[i])));
    }
    return largest;
}

// Fine detail of high contrast: black and white texels and thin lines, colour and alpha apart.
test::SampleImage high_contrast(std::uint32_t width, std::uint32_t height) {
    test::SampleImage image = test::photo_like(width, height, 4, 9);
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            std::uint8_t* texel = &image.bytes[(std::size_t(y) * width + x) * 4];
            if ((x + y) % 2 == 0) texel[0] = texel[1] = texel[2] = 0;
            if (x % 3 == 0) texel[1] = 255;
            if (y % 5 == 0) texel[2] = 255;
        }
    }
    return image;
}

// The test: each level of an sRGB bake against the linear-light box filter of the level
// above (as the file holds it), within 1/255; alpha the plain mean, exactly; mip 0 the image's
// stored (encoded) values. A linear bake of the same image is far from that filter.
TEST_F(BakedSampling, SrgbLevelsAreTheLinearLightFilterOfTheLevelAbove) {
    const std::uint32_t width = 301, height = 263;
    const test::SampleImage image = high_contrast(width, height);
    BakedTiles srgb(bake(
        image, {AddressMode::clamp_to_edge, AddressMode::clamp_to_edge, vt::ColorSpace::srgb}));
    EXPECT_EQ(srgb.source().sampling().color_space, vt::ColorSpace::srgb);
    EXPECT_EQ(level_of(srgb, 0).texels, image.bytes);
    for (std::uint32_t mip = 1; mip < srgb.layout().mip_count; ++mip) {
        const test::ReferenceLevel above = level_of(srgb, mip - 1);
        const test::ReferenceLevel got = level_of(srgb, mip);
        const test::ReferenceLevel want = test::next_reference_level(above, true);
        EXPECT_LE(largest_difference(got, want, false), 1) << "mip " << mip;
        EXPECT_EQ(largest_difference(got, want, true), 0) << "mip " << mip;
    }
    // The whole chain, as the reference builds it from mip 0, for the borders too.
    const auto srgb_levels = test::reference_levels({width, height, image.bytes}, true);
    EXPECT_LE(largest_difference(level_of(srgb, 1), srgb_levels[1], false), 1);

    BakedTiles linear(bake(image, {}));
    const test::ReferenceLevel linear_light = test::next_reference_level(level_of(linear, 0), true);
    EXPECT_GT(largest_difference(level_of(linear, 1), linear_light, false), 40)
        << "a linear bake filtered in linear light";
    EXPECT_EQ(texels_unlike(linear, test::reference_levels({width, height, image.bytes}),
                            AddressMode::clamp_to_edge, AddressMode::clamp_to_edge),
              0u);
}

}  // namespace
}  // namespace vtpage::bake
