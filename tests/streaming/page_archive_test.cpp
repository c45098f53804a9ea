// Page archives written and read back: compressible and random pages, pages in any order and
// from several threads, the split read (stored_extent + decode_page), the writer's refusals,
// and the file system cases (a planted link, a FIFO, a full disk, a writer never finished).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <thread>

#include "../support/temporary_folder.hpp"
#include "page_archive_test_support.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace vtpage::vt {
namespace {

namespace fs = std::filesystem;
using test::detail_of;

// Page p of the test archives: random for every third page, smooth otherwise.
std::vector<std::byte> test_page(const PageArchiveShape& shape, std::uint64_t p) {
    return p % 3 == 1 ? test::random_page(shape.page_bytes, p)
                      : test::smooth_page(shape.page_bytes, p);
}

class PageArchiveTest : public testing::Test {
protected:
    // Writes pages in `order` (all of them by default) and finishes.
    std::string write(const PageArchiveShape& shape, std::vector<std::uint64_t> order = {}) {
        if (order.empty()) {
            order.resize(shape.page_count);
            std::iota(order.begin(), order.end(), std::uint64_t(0));
        }
        PageArchiveWriter writer(path_, shape, descriptor_);
        for (std::uint64_t p : order) writer.add_page(p, test_page(shape, p));
        writer.finish();
        return path_;
    }
    void expect_pages(const PageArchive& archive) {
        const PageArchiveShape shape = archive.shape();
        std::vector<std::byte> page(shape.page_bytes);
        for (std::uint64_t p = 0; p < shape.page_count; ++p) {
            archive.read_page(p, page);
            EXPECT_TRUE(page == test_page(shape, p)) << "page " << p;
        }
    }
    std::vector<std::string> folder_contents() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(folder_.path())) {
            names.push_back(entry.path().filename().string());
        }
        return names;
    }

    test::TemporaryFolder folder_;
    std::string path_ = folder_.file("texture.vtpa");
    std::vector<std::byte> descriptor_ = test::bytes_of("rgba8 4096x4096, seed 7");
};

TEST_F(PageArchiveTest, CompressibleAndRandomPagesRoundTrip) {
    const PageArchiveShape shape = test::small_shape(6);
    const PageArchive archive(write(shape));
    EXPECT_EQ(archive.shape(), shape);
    EXPECT_TRUE(std::ranges::equal(archive.descriptor(), descriptor_));
    expect_pages(archive);
    for (std::uint64_t p = 0; p < shape.page_count; ++p) {
        const StoredExtent extent = archive.stored_extent(p);
        EXPECT_EQ(extent.offset % page_archive_alignment, 0u);
        if (p % 3 == 1) {
            EXPECT_EQ(extent.encoding, PageEncoding::raw) << "random bytes are stored raw";
            EXPECT_EQ(extent.bytes, shape.page_bytes);
        } else {
            EXPECT_EQ(extent.encoding, PageEncoding::zstd);
            EXPECT_LT(extent.bytes, shape.page_bytes / 4);
        }
    }
    archive.check_all();
    EXPECT_EQ(fs::file_size(path_) % page_archive_alignment, 0u);
}

TEST_F(PageArchiveTest, ProceduralPagesRoundTrip) {
    const ProceduralSource source(ProceduralSettings{3, 12});
    const PageArchiveShape shape{4, 2u << 20, 64u << 10, 32};
    std::vector<std::vector<std::byte>> pages(shape.page_count,
                                              std::vector<std::byte>(shape.page_bytes));
    {
        PageArchiveWriter writer(path_, shape, {});
        for (std::uint64_t p = 0; p < shape.page_count; ++p) {
            source.fill_host(p, pages[p]);
            writer.add_page(p, pages[p]);
        }
        writer.finish();
    }
    const PageArchive archive(path_);
    EXPECT_TRUE(archive.descriptor().empty());
    std::vector<std::byte> page(shape.page_bytes);
    for (std::uint64_t p = 0; p < shape.page_count; ++p) {
        archive.read_page(p, page);
        EXPECT_TRUE(page == pages[p]) << "page " << p;
        EXPECT_EQ(archive.stored_extent(p).encoding, PageEncoding::zstd);
    }
}

TEST_F(PageArchiveTest, PagesAddedOutOfOrderFromSeveralThreads) {
    const PageArchiveShape shape = test::small_shape(64);
    {
        PageArchiveWriter writer(path_, shape, descriptor_);
        std::vector<std::thread> threads;
        for (std::uint64_t t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                // Thread t adds pages t, t + 4, ... from the top down.
                for (std::uint64_t p = shape.page_count - 4 + t; p < shape.page_count; p -= 4) {
                    writer.add_page(p, test_page(shape, p));
                }
            });
        }
        for (auto& thread : threads) thread.join();
        writer.finish();
    }
    const PageArchive archive(path_);
    expect_pages(archive);
    archive.check_all();
    // The stored pages are where the threads put them: not in page order.
    bool ordered = true;
    for (std::uint64_t p = 1; p < shape.page_count; ++p) {
        ordered = ordered && archive.stored_extent(p).offset > archive.stored_extent(p - 1).offset;
    }
    EXPECT_FALSE(ordered);
}

TEST_F(PageArchiveTest, ThePyramidOrderIsKept) {
    const PageArchive archive(write(test::small_shape(5), {4, 0, 3, 1, 2}));
    expect_pages(archive);
    EXPECT_LT(archive.stored_extent(4).offset, archive.stored_extent(0).offset);
}

TEST_F(PageArchiveTest, TheSplitReadDecodesStoredBytesReadElsewhere) {
    const PageArchive archive(write(test::small_shape(3)));
    const std::vector<std::byte> file = test::read_file(path_);
    std::vector<std::byte> page(archive.shape().page_bytes);
    for (std::uint64_t p = 0; p < 3; ++p) {
        const StoredExtent extent = archive.stored_extent(p);
        archive.decode_page(p, std::span(file).subspan(extent.offset, extent.bytes), page);
        EXPECT_TRUE(page == test_page(archive.shape(), p)) << "page " << p;
    }
    const StoredExtent extent = archive.stored_extent(0);
    const auto stored = std::span(file).subspan(extent.offset, extent.bytes);
    EXPECT_NE(
        detail_of([&] { archive.decode_page(0, stored.first(10), page); }, Errc::invalid_argument)
            .find("stored bytes"),
        std::string::npos);
    detail_of([&] { archive.decode_page(0, stored, std::span(page).first(100)); },
              Errc::invalid_argument);
    detail_of([&] { archive.read_page(0, std::span(page).first(4095)); }, Errc::invalid_argument);
    detail_of([&] { archive.read_page(3, page); }, Errc::out_of_range);
    detail_of([&] { archive.stored_extent(3); }, Errc::out_of_range);
    detail_of([&] { archive.decode_page(UINT64_MAX, stored, page); }, Errc::out_of_range);
}

TEST_F(PageArchiveTest, ThreadsReadTheSameArchiveAtOnce) {
    const PageArchiveShape shape = test::small_shape(12);
    const PageArchive archive(write(shape));
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            std::vector<std::byte> page(shape.page_bytes);
            for (int round = 0; round < 20; ++round) {
                for (std::uint64_t p = 0; p < shape.page_count; ++p) {
                    archive.read_page(p, page);
                    if (page != test_page(shape, p)) ++mismatches;
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace vtpage::vt
