// Baking and reading against a hostile file system and hostile arguments: a symbolic link
// planted where the temporary file goes, a FIFO where a file should be, a full disk, degenerate
// image shapes, and out-of-range arguments to every public function of the baked format. Each
// is refused with a typed vtpage::Error that says what was wrong; none writes where it should
// not, hangs, or leaves a partial file behind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/expect_error.hpp"
#include "../support/full_disk.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace vtpage::vt {
namespace {

namespace fs = std::filesystem;

// The detail of the vtpage::Error that call throws with code; "" (and a failure) otherwise.
std::string detail_of(const std::function<void()>& call, Errc code) {
    try {
        call();
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), code) << error.what();
        return error.detail();
    }
    return {};
}

class BakeSafetyTest : public testing::Test {
protected:
    test::TemporaryFolder folder_;
    RgbaImage image_ = test::make_test_image(40, 30, 3);
};

TEST_F(BakeSafetyTest, APlantedSymbolicLinkIsNotFollowed) {
    const std::string out = folder_.file("out.vtex");
    const std::string victim = folder_.file("victim");
    { std::ofstream(victim) << "precious"; }
    fs::create_symlink(victim, out + ".partial");
    const std::string detail = detail_of([&] { bake_texture(image_, out); }, Errc::io_error);
    EXPECT_NE(detail.find("refusing to write through it"), std::string::npos) << detail;
    EXPECT_EQ(fs::file_size(victim), 8u) << "the link was followed";
    EXPECT_FALSE(fs::exists(out));
    EXPECT_TRUE(fs::is_symlink(out + ".partial")) << "someone else's link is left alone";

    // A dangling link (to a file that would be created) is refused the same way.
    fs::remove(out + ".partial");
    fs::create_symlink(folder_.file("created-through-link"), out + ".partial");
    EXPECT_ERRC(bake_texture(image_, out), Errc::io_error);
    EXPECT_FALSE(fs::exists(folder_.file("created-through-link")));
}

TEST_F(BakeSafetyTest, AStaleTemporaryFileIsReplaced) {
    const std::string out = folder_.file("out.vtex");
    { std::ofstream(out + ".partial") << "left by an interrupted bake"; }
    bake_texture(image_, out);
    EXPECT_FALSE(fs::exists(out + ".partial"));
    BakedTextureFile(out).check_all();
}

TEST_F(BakeSafetyTest, AFullDiskLeavesNoPartialFile) {
    const std::string out = folder_.file("out.vtex");
    Errc code = Errc::backend_failure;
    std::string detail;
    {
        const test::FullDisk full(1 << 20);  // half a page
        ASSERT_TRUE(full.engaged());
        try {
            bake_texture(image_, out);
        } catch (const Error& error) {
            code = error.code();
            detail = error.detail();
        }
    }
    EXPECT_EQ(code, Errc::io_error) << detail;
    EXPECT_NE(detail.find("write failed"), std::string::npos) << detail;
    EXPECT_FALSE(fs::exists(out + ".partial"));
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(BakeSafetyTest, AFifoIsRefusedWithoutWaiting) {
    const std::string fifo = folder_.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string detail = detail_of([&] { BakedTextureFile file(fifo); }, Errc::io_error);
    EXPECT_NE(detail.find("not a regular file"), std::string::npos) << detail;
    EXPECT_ERRC(BakedTextureFile file(folder_.path().string()), Errc::io_error);  // a folder
}

TEST_F(BakeSafetyTest, DegenerateShapesAreRefusedBeforeAnythingIsAllocated) {
    const BakeSettings settings;
    std::string detail =
        detail_of([&] { check_bake_shape(1, 16384, settings); }, Errc::invalid_argument);
    EXPECT_NE(detail.find("a 1 x 16384 image pads to 16384 x 16384"), std::string::npos) << detail;
    EXPECT_ERRC(check_bake_shape(1, 65536, settings), Errc::invalid_argument);
    EXPECT_ERRC(check_bake_shape(0, 10, settings), Errc::invalid_argument);
    EXPECT_ERRC(check_bake_shape(10, (1u << 20) + 1, settings), Errc::invalid_argument);
    check_bake_shape(16384, 8192, settings);  // a 2:1 panorama is fine

    BakeSettings capped;
    capped.max_output_bytes = 100u << 20;
    detail = detail_of([&] { check_bake_shape(8192, 8192, capped); }, Errc::invalid_argument);
    EXPECT_NE(detail.find("more than the limit of 104857600"), std::string::npos) << detail;
    EXPECT_GT(baked_file_bytes(8192, 8192), capped.max_output_bytes);
    EXPECT_EQ(baked_file_bytes(40, 30), 4096 + page_bytes);

    // bake_texture applies the same limits: a thin strip is not padded to a huge square.
    RgbaImage strip;
    strip.width = 1;
    strip.height = 16384;
    strip.texels.assign(16384 * 4, 7);
    EXPECT_ERRC(bake_texture(strip, folder_.file("strip.vtex")), Errc::invalid_argument);
    EXPECT_FALSE(fs::exists(folder_.file("strip.vtex.partial")));
}

TEST_F(BakeSafetyTest, ImageFunctionsRefuseBadImages) {
    RgbaImage empty;
    EXPECT_ERRC(pad_to_square_power_of_two(empty), Errc::invalid_argument);
    EXPECT_ERRC(downsample_box(empty), Errc::invalid_argument);
    RgbaImage short_texels;
    short_texels.width = 5;
    short_texels.height = 3;
    short_texels.texels.resize(5 * 3 * 4 - 1);
    EXPECT_ERRC(pad_to_square_power_of_two(short_texels), Errc::invalid_argument);
    EXPECT_ERRC(bake_texture(short_texels, folder_.file("x.vtex")), Errc::invalid_argument);
    RgbaImage huge;
    huge.width = 0x80000001u;  // the padding loop once doubled past 2^31 into 0
    huge.height = 1;
    EXPECT_ERRC(pad_to_square_power_of_two(huge), Errc::invalid_argument);
    RgbaImage wide = test::make_test_image(4, 2, 1);
    EXPECT_ERRC(downsample_box(wide), Errc::invalid_argument);  // not square
    RgbaImage three = test::make_test_image(3, 3, 1);
    EXPECT_ERRC(downsample_box(three), Errc::invalid_argument);  // not a power of two
    RgbaImage one = test::make_test_image(1, 1, 1);
    EXPECT_ERRC(downsample_box(one), Errc::invalid_argument);  // nothing below 1 x 1
    EXPECT_EQ(downsample_box(test::make_test_image(4, 4, 1)).width, 2u);
    EXPECT_EQ(pad_to_square_power_of_two(wide).width, 4u);
}

TEST_F(BakeSafetyTest, PageFunctionsRefuseBadPagesAndSpans) {
    const std::string path = folder_.file("t.vtex");
    bake_texture(image_, path);
    const BakedTextureFile file(path);
    std::vector<std::byte> page(page_bytes);
    file.read_page(0, page);
    file.verify_page(0, page);
    std::string detail = detail_of([&] { file.verify_page(999, page); }, Errc::out_of_range);
    EXPECT_NE(detail.find("page 999 is not in the file: it has 1 pages"), std::string::npos)
        << detail;
    detail =
        detail_of([&] { file.verify_page(0, std::span(page).first(100)); }, Errc::invalid_argument);
    EXPECT_NE(detail.find("100 given"), std::string::npos) << detail;
    EXPECT_ERRC(file.verify_page(UINT64_MAX, page), Errc::out_of_range);
    EXPECT_ERRC(file.verify_page(0, {}), Errc::invalid_argument);
    EXPECT_ERRC(file.read_page(999, page), Errc::out_of_range);
    EXPECT_ERRC(file.read_page(0, std::span(page).first(100)), Errc::invalid_argument);
    EXPECT_ERRC(file.read_page(UINT64_MAX / page_bytes, page), Errc::out_of_range);
}

TEST_F(BakeSafetyTest, AnUnusedTailTileIsNamedAsSuch) {
    // 64 x 64: seven mips, all in the tail page; tile 31 of it holds no mip.
    const std::string path = folder_.file("t.vtex");
    bake_texture(test::make_test_image(64, 64, 2), path);
    const BakedTextureFile file(path);
    std::vector<std::byte> page(page_bytes);
    file.read_page(0, page);
    page[31 * std::size_t(tile_bytes) + 5] ^= std::byte{1};
    const std::string detail = detail_of([&] { file.verify_page(0, page); }, Errc::corrupt_data);
    EXPECT_NE(detail.find("tile 31 (unused: the last mip is 6)"), std::string::npos) << detail;
    EXPECT_EQ(detail.find("mip 3"), std::string::npos) << detail;
    page[31 * std::size_t(tile_bytes) + 5] ^= std::byte{1};
    page[2 * std::size_t(tile_bytes)] ^= std::byte{1};
    const std::string mip_two = detail_of([&] { file.verify_page(0, page); }, Errc::corrupt_data);
    EXPECT_NE(mip_two.find("tile 2 (mip 2)"), std::string::npos) << mip_two;
}

}  // namespace
}  // namespace vtpage::vt
