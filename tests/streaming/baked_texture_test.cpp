#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "streaming_test_support.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

namespace vtpage::vt {
namespace {

// Compares every texel of every tile of the file (borders included) with the reference.
void expect_file_matches(const BakedTextureFile& file, const RgbaImage& image) {
    const TextureLayout layout = file.layout();
    const auto mips = test::reference_mips(image, layout.width);
    std::vector<std::byte> page(page_bytes);
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        const std::uint32_t size = layout.mips[mip].width;
        for (std::uint32_t ty = 0; ty < layout.mips[mip].tiles_y; ++ty) {
            for (std::uint32_t tx = 0; tx < layout.mips[mip].tiles_x; ++tx) {
                const TileLocation where = layout.locate(mip, tx, ty);
                file.read_page(where.page, page);
                const std::byte* tile = page.data() + where.byte_offset();
                for (std::uint32_t y = 0; y < tile_size; ++y) {
                    for (std::uint32_t x = 0; x < tile_size; ++x) {
                        const std::uint32_t lx = level_texel(tx, x, size),
                                            ly = level_texel(ty, y, size);
                        ASSERT_EQ(std::memcmp(tile + texel_offset(x, y),
                                              &mips[mip][(std::size_t(ly) * size + lx) * 4], 4),
                                  0)
                            << "mip " << mip << " tile " << tx << "," << ty << " texel " << x << ","
                            << y;
                    }
                }
            }
        }
    }
}

class BakedTextureTest : public testing::Test {
protected:
    std::string bake(const RgbaImage& image, const std::string& name = "texture.vtex") {
        const std::string path = folder_.file(name);
        bake_texture(image, path);
        return path;
    }
    // Expects opening (or reading every page of) the file to fail with code and a message
    // containing `words`.
    void expect_broken(const std::string& path, Errc code, const std::string& words) {
        try {
            BakedTextureFile file(path);
            file.check_all();
            ADD_FAILURE() << "no error for " << words;
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), code) << error.what();
            EXPECT_NE(error.detail().find(words), std::string::npos) << error.what();
            EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
        }
    }
    void patch(const std::string& path, std::uint64_t offset, const void* bytes, std::size_t size) {
        const int fd = ::open(path.c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::pwrite(fd, bytes, size, off_t(offset)), ssize_t(size));
        ::close(fd);
    }
    test::TemporaryFolder folder_;
};

TEST_F(BakedTextureTest, SquareImageRoundTripsEveryTexelOfEveryMip) {
    const RgbaImage image = test::make_test_image(256, 256, 1);
    const std::string path = bake(image);
    BakedTextureFile file(path);
    EXPECT_EQ(file.header().size_log2, 8u);
    EXPECT_EQ(file.header().page_count, TextureLayout(8).page_count);
    EXPECT_EQ(file.header().source_width, 256u);
    expect_file_matches(file, image);
    // Mip 0's payload is the image itself.
    std::vector<std::byte> page(page_bytes);
    file.read_page(0, page);
    EXPECT_EQ(std::memcmp(page.data() + texel_offset(tile_border + 7, tile_border + 3),
                          &image.texels[(3 * 256 + 7) * 4], 4),
              0);
    file.check_all();
}

TEST_F(BakedTextureTest, OtherShapesArePaddedToASquarePowerOfTwo) {
    const RgbaImage image = test::make_test_image(300, 90, 2);
    BakedTextureFile file(bake(image));
    EXPECT_EQ(file.header().size_log2, 9u);
    EXPECT_EQ(file.header().source_width, 300u);
    EXPECT_EQ(file.header().source_height, 90u);
    expect_file_matches(file, image);
    const RgbaImage one = test::make_test_image(1, 1, 3);
    BakedTextureFile tiny(bake(one, "one.vtex"));
    EXPECT_EQ(tiny.header().page_count, 1u);
    expect_file_matches(tiny, one);
}

TEST_F(BakedTextureTest, DamageIsFoundAndNamed) {
    const RgbaImage image = test::make_test_image(200, 200, 4);
    const std::string path = bake(image);
    const BakedHeader good = BakedTextureFile(path).header();

    {  // A flipped byte in a tile.
        const std::string copy = folder_.file("tile.vtex");
        std::filesystem::copy_file(path, copy);
        const std::uint64_t offset = good.data_offset + 1 * page_bytes + 5 * tile_bytes + 999;
        const std::uint8_t byte = 0x5a;
        patch(copy, offset, &byte, 1);
        BakedTextureFile file(copy);  // opens: header and table are fine
        std::vector<std::byte> page(page_bytes);
        file.read_page(0, page);
        try {
            file.read_page(1, page);
            ADD_FAILURE() << "no error";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::corrupt_data);
            EXPECT_NE(error.detail().find("tile checksum mismatch: page 1"), std::string::npos)
                << error.detail();
            EXPECT_NE(error.detail().find("tile 5"), std::string::npos) << error.detail();
        }
        file.read_page(1, page, false);  // without verification the bytes come through
        expect_broken(copy, Errc::corrupt_data, "tile checksum mismatch");
    }
    {  // Truncated.
        const std::string copy = folder_.file("short.vtex");
        std::filesystem::copy_file(path, copy);
        std::filesystem::resize_file(copy, good.file_bytes - 4096);
        expect_broken(copy, Errc::corrupt_data, "truncated: the file has");
        std::filesystem::resize_file(copy, 60);
        expect_broken(copy, Errc::corrupt_data, "less than the 128-byte header");
    }
    {  // Not ours.
        const std::string copy = folder_.file("magic.vtex");
        std::filesystem::copy_file(path, copy);
        patch(copy, 0, "NOTATEX!", 8);
        expect_broken(copy, Errc::corrupt_data, "bad magic");
    }
    {  // A newer version.
        const std::string copy = folder_.file("version.vtex");
        std::filesystem::copy_file(path, copy);
        const std::uint32_t version = 9;
        patch(copy, offsetof(BakedHeader, version), &version, 4);
        expect_broken(copy, Errc::corrupt_data, "unsupported version 9");
    }
    {  // A header field changed.
        const std::string copy = folder_.file("header.vtex");
        std::filesystem::copy_file(path, copy);
        const std::uint32_t size_log2 = 5;
        patch(copy, offsetof(BakedHeader, size_log2), &size_log2, 4);
        expect_broken(copy, Errc::corrupt_data, "header checksum mismatch");
    }
    {  // The checksum table changed.
        const std::string copy = folder_.file("table.vtex");
        std::filesystem::copy_file(path, copy);
        const std::uint8_t byte = 0x01;
        patch(copy, good.checksum_offset + 17, &byte, 1);
        expect_broken(copy, Errc::corrupt_data, "checksum table corrupt");
    }
    expect_broken(folder_.file("missing.vtex"), Errc::io_error, "cannot open");
}

TEST(ChecksumTest, SeesEveryBitAndEveryLength) {
    std::vector<std::byte> bytes(4099);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 7);
    const std::uint64_t sum = checksum64(bytes);
    EXPECT_EQ(checksum64(bytes), sum);
    for (std::size_t i : {std::size_t(0), std::size_t(31), std::size_t(2048), std::size_t(4098)}) {
        for (int bit = 0; bit < 8; ++bit) {
            bytes[i] ^= std::byte(1 << bit);
            EXPECT_NE(checksum64(bytes), sum) << "byte " << i << " bit " << bit;
            bytes[i] ^= std::byte(1 << bit);
        }
    }
    EXPECT_NE(checksum64(std::span(bytes).first(4098)), sum);
    const std::vector<std::byte> zeros_a(64), zeros_b(72);
    EXPECT_NE(checksum64(zeros_a), checksum64(zeros_b));
}

// XXH3-64 as xxhsum -H3 and Python's xxhash print it, for two inputs.
TEST(BakedFormatChecksumTest, Xxh3IsTheReferenceValue) {
    const std::string hello = "hello world";
    EXPECT_EQ(xxh3_64(std::as_bytes(std::span(hello))), 0xd447b1ea40e6988bull);
    EXPECT_EQ(archive_checksum(3, std::as_bytes(std::span(hello))), 0xd447b1ea40e6988bull);
    EXPECT_EQ(archive_checksum(2, std::as_bytes(std::span(hello))),
              checksum64(std::as_bytes(std::span(hello))));
    EXPECT_EQ(xxh3_64({}), 0x2d06800538d394c2ull);
}

PageArchiveShape archive_of(TextureShape shape) { return baked_archive_shape(shape); }

std::span<const std::byte> bytes_of(const BakedTextureDescriptor& d) {
    return std::as_bytes(std::span(&d, 1));
}

TEST(BakedDescriptorSamplingTest, SrgbOnlyForFormatsThatHaveIt) {
    const TextureSampling srgb{AddressMode::clamp_to_edge, AddressMode::clamp_to_edge,
                               ColorSpace::srgb};
    for (TileFormat format : {TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3}) {
        const BakedTextureDescriptor d = make_baked_texture_descriptor({100, 50, format}, 8, srgb);
        EXPECT_EQ(d.sampling(), srgb);
        EXPECT_EQ(check_baked_texture_descriptor(bytes_of(d), archive_of({100, 50, format}), 3, "f")
                      .sampling(),
                  srgb);
    }
    for (TileFormat format : {TileFormat::bc4, TileFormat::bc5}) {
        try {
            make_baked_texture_descriptor({100, 50, format}, 8, srgb);
            ADD_FAILURE() << "sRGB accepted for " << tile_format_name(format);
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
            EXPECT_NE(error.detail().find(std::string("color_space is srgb for ") +
                                          tile_format_name(format) +
                                          ": sRGB is only for rgba8, bc1 and bc3"),
                      std::string::npos)
                << error.detail();
        }
    }
    EXPECT_THROW(make_baked_texture_descriptor({100, 50, TileFormat::bc1}, 8,
                                               {AddressMode(3), AddressMode::repeat}),
                 Error);
}

TEST(BakedDescriptorSamplingTest, VersionTwoDescriptorsHaveNoSamplingFields) {
    const TextureShape shape{100, 50, TileFormat::bc1};
    BakedTextureDescriptor d = make_baked_texture_descriptor(
        shape, 8, {AddressMode::repeat, AddressMode::mirrored_repeat, ColorSpace::srgb});
    EXPECT_EQ(std::string(d.magic, 8), "VTPGTEX3");
    // A version-3 descriptor in a version-2 archive, and the other way round.
    EXPECT_THROW(check_baked_texture_descriptor(bytes_of(d), archive_of(shape), 2, "f"), Error);
    std::memcpy(d.magic, baked_texture_descriptor_magic_v2, 8);
    EXPECT_THROW(check_baked_texture_descriptor(bytes_of(d), archive_of(shape), 3, "f"), Error);
    // Version 2 with sampling fields set is refused naming the field; zero reads as defaults.
    try {
        check_baked_texture_descriptor(bytes_of(d), archive_of(shape), 2, "f");
        ADD_FAILURE() << "accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
        EXPECT_NE(error.detail().find("address_u (zero in version 2) is 1"), std::string::npos)
            << error.detail();
    }
    d.address_u = d.address_v = d.color_space = 0;
    EXPECT_EQ(check_baked_texture_descriptor(bytes_of(d), archive_of(shape), 2, "f").sampling(),
              TextureSampling{});
}

}  // namespace
}  // namespace vtpage::vt
