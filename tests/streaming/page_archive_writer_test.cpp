// What PageArchiveWriter refuses, and what it leaves on disk when it fails or is abandoned.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "../support/full_disk.hpp"
#include "../support/temporary_folder.hpp"
#include "page_archive_test_support.hpp"

namespace vtpage::vt {
namespace {

namespace fs = std::filesystem;
using test::detail_of;

class PageArchiveWriterTest : public testing::Test {
protected:
    std::size_t entries() const {
        return std::size_t(std::distance(fs::directory_iterator(folder_.path()), {}));
    }
    test::TemporaryFolder folder_;
    std::string path_ = folder_.file("texture.vtpa");
    PageArchiveShape shape_ = test::small_shape(4);
};

TEST_F(PageArchiveWriterTest, RefusesDuplicateOutOfRangeAndMisSizedPages) {
    PageArchiveWriter writer(path_, shape_, {});
    const auto page = test::smooth_page(shape_.page_bytes, 0);
    writer.add_page(2, page);
    EXPECT_NE(detail_of([&] { writer.add_page(2, page); }, Errc::invalid_argument)
                  .find("page 2 is added twice"),
              std::string::npos);
    EXPECT_NE(detail_of([&] { writer.add_page(4, page); }, Errc::invalid_argument)
                  .find("page 4 is out of range"),
              std::string::npos);
    EXPECT_NE(
        detail_of([&] { writer.add_page(1, std::span(page).first(4000)); }, Errc::invalid_argument)
            .find("4000 bytes"),
        std::string::npos);
    // The refusals left the writer as it was: page 1 can still come, then the rest.
    writer.add_page(1, page);
    EXPECT_NE(detail_of([&] { writer.finish(); }, Errc::invalid_argument)
                  .find("page 0 was not added (2 of 4 pages missing)"),
              std::string::npos);
    EXPECT_FALSE(fs::exists(path_));
    writer.add_page(0, page);
    writer.add_page(3, page);
    writer.finish();
    detail_of([&] { writer.add_page(0, page); }, Errc::invalid_argument);
    PageArchive(path_).check_all();
}

TEST_F(PageArchiveWriterTest, RefusesBadShapesAndDescriptors) {
    const std::vector<std::byte> none;
    detail_of([&] { PageArchiveWriter(path_, {0, 4096, 1024, 4}, none); }, Errc::invalid_argument);
    detail_of([&] { PageArchiveWriter(path_, {1, 4096, 0, 4}, none); }, Errc::invalid_argument);
    EXPECT_NE(detail_of(
                  [&] {
                      PageArchiveWriter(path_, {1, 4000, 1024, 4}, none);
                  },
                  Errc::invalid_argument)
                  .find("not tile_bytes x tiles_per_page"),
              std::string::npos);
    detail_of(
        [&] {
            PageArchiveWriter(path_, {1, 128u << 20, 32u << 20, 4}, none);
        },
        Errc::invalid_argument);
    detail_of(
        [&] {
            PageArchiveWriter(path_, {std::uint64_t(1) << 40, 4096, 1024, 4}, none);
        },
        Errc::invalid_argument);
    const std::vector<std::byte> large(page_archive_max_descriptor_bytes + 1);
    detail_of([&] { PageArchiveWriter(path_, shape_, large); }, Errc::invalid_argument);
    EXPECT_EQ(entries(), 0u) << "nothing is created for a refused shape";
    const std::vector<std::byte> largest(page_archive_max_descriptor_bytes, std::byte{7});
    PageArchiveWriter writer(path_, test::small_shape(1), largest);
    writer.add_page(0, test::random_page(4096, 1));
    writer.finish();
    EXPECT_TRUE(std::ranges::equal(PageArchive(path_).descriptor(), largest));
}

TEST_F(PageArchiveWriterTest, AWriterDestroyedUnfinishedLeavesNothing) {
    {
        PageArchiveWriter writer(path_, shape_, test::bytes_of("descriptor"));
        writer.add_page(0, test::smooth_page(shape_.page_bytes, 0));
        EXPECT_TRUE(fs::exists(path_ + ".partial"));
    }
    EXPECT_EQ(entries(), 0u);
    { PageArchiveWriter writer(path_, shape_, {}); }
    EXPECT_EQ(entries(), 0u);
}

TEST_F(PageArchiveWriterTest, APlantedSymbolicLinkIsNotFollowed) {
    const std::string victim = folder_.file("victim");
    { std::ofstream(victim) << "someone else's file"; }
    fs::create_symlink(victim, path_ + ".partial");
    EXPECT_NE(detail_of([&] { PageArchiveWriter(path_, shape_, {}); }, Errc::io_error)
                  .find("refusing to write through it"),
              std::string::npos);
    EXPECT_EQ(fs::file_size(victim), 19u);
    EXPECT_TRUE(fs::is_symlink(path_ + ".partial")) << "someone else's link is left alone";
    EXPECT_FALSE(fs::exists(path_));
}

TEST_F(PageArchiveWriterTest, AStaleTemporaryFileIsReplaced) {
    { std::ofstream(path_ + ".partial") << "left by an interrupted writer"; }
    PageArchiveWriter writer(path_, test::small_shape(1), {});
    writer.add_page(0, test::smooth_page(4096, 0));
    writer.finish();
    EXPECT_FALSE(fs::exists(path_ + ".partial"));
    PageArchive(path_).check_all();
}

TEST_F(PageArchiveWriterTest, AFullDiskIsAnIoErrorAndLeavesNothing) {
    std::string detail;
    {
        PageArchiveWriter writer(path_, shape_, {});
        test::FullDisk full(3 * 4096);  // the tables and two pages: the third write fails
        ASSERT_TRUE(full.engaged());
        detail = detail_of(
            [&] {
                for (std::uint64_t p = 0; p < shape_.page_count; ++p) {
                    writer.add_page(p, test::random_page(shape_.page_bytes, p));
                }
            },
            Errc::io_error);
        full.lift();
        EXPECT_FALSE(fs::exists(path_ + ".partial")) << "removed at the failure";
        detail_of([&] { writer.finish(); }, Errc::invalid_argument);
    }
    EXPECT_NE(detail.find("write failed"), std::string::npos) << detail;
    EXPECT_EQ(entries(), 0u);
}

TEST_F(PageArchiveWriterTest, AFifoIsRefusedWithoutWaiting) {
    ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
    EXPECT_NE(
        detail_of([&] { PageArchive archive(path_); }, Errc::io_error).find("not a regular file"),
        std::string::npos);
    detail_of([&] { PageArchive archive(folder_.path().string()); }, Errc::io_error);
    detail_of([&] { PageArchive archive(folder_.file("missing")); }, Errc::io_error);
}

}  // namespace
}  // namespace vtpage::vt
