// Format version 4: a zstd page stored as several frames, one per part, that decode apart and on
// several threads at once into the page that was written; how many parts a writer makes; what
// the split read refuses. Damaged parts: page_archive_corruption_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "../support/temporary_folder.hpp"
#include "page_archive_test_support.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace vtpage::vt {
namespace {

using test::detail_of;

// A 2 MiB page of 32 tiles, as an RGBA8 baked texture has.
constexpr PageArchiveShape rgba8_shape(std::uint64_t pages) {
    return {pages, 2u << 20, 64u << 10, 32};
}

std::vector<std::byte> written_page(std::uint64_t page) {
    return test::smooth_page(2u << 20, page, 3);
}

class PageArchivePartsTest : public testing::Test {
protected:
    // Pages 0 and 2 compress, page 1 is random (stored raw).
    void write(PageArchiveSettings settings, PageArchiveShape shape = rgba8_shape(3)) {
        PageArchiveWriter writer(path_, shape, test::bytes_of("d"), settings);
        for (std::uint64_t p = 0; p < shape.page_count; ++p) {
            writer.add_page(p, p == 1 ? test::random_page(shape.page_bytes, 1)
                                      : test::smooth_page(shape.page_bytes, p, 3));
        }
        writer.finish();
    }
    std::vector<std::byte> stored(const PageArchive& archive, std::uint64_t page) const {
        const StoredExtent extent = archive.stored_extent(page);
        const std::vector<std::byte> file = test::read_file(path_);
        return {file.begin() + std::ptrdiff_t(extent.offset),
                file.begin() + std::ptrdiff_t(extent.offset + extent.bytes)};
    }

    // `count` pages of `source` from mip 0 to its tail, written with `settings`.
    void write_procedural(const ProceduralSource& source, std::uint64_t count,
                          PageArchiveSettings settings) {
        PageArchiveWriter writer(path_, rgba8_shape(count), test::bytes_of("d"), settings);
        std::vector<std::byte> page(page_bytes);
        for (std::uint64_t i = 0; i < count; ++i) {
            source.fill_host(procedural_page(source, i, count), page);
            writer.add_page(i, page);
        }
        writer.finish();
    }
    static std::uint64_t procedural_page(const ProceduralSource& source, std::uint64_t i,
                                         std::uint64_t count) {
        return i * source.layout().page_count / count;
    }
    static std::uint64_t stored_bytes(const PageArchive& archive, std::uint64_t count) {
        std::uint64_t total = 0;
        for (std::uint64_t i = 0; i < count; ++i) total += archive.stored_extent(i).bytes;
        return total;
    }

    test::TemporaryFolder folder_;
    std::string path_ = folder_.file("parts.vtpa");
};

TEST_F(PageArchivePartsTest, AWriterMakesTheDefaultPartsUnlessAskedOtherwise) {
    write({});
    EXPECT_EQ(PageArchive(path_).parts_per_page(), page_archive_default_parts_per_page);
    EXPECT_EQ(page_archive_default_parts_per_page, 8u);  // 256 KiB parts of 4 RGBA8 tiles
}

TEST_F(PageArchivePartsTest, PartsDecodedOnFourThreadsInAnyOrderMakeThePageWritten) {
    write({.parts_per_page = 4});
    const PageArchive archive(path_);
    EXPECT_EQ(archive.version(), 4u);
    EXPECT_EQ(archive.parts_per_page(), 4u);
    const std::vector<std::byte> bytes = stored(archive, 0);
    const std::vector<StoredPart> parts = archive.split_stored(0, bytes);
    ASSERT_EQ(parts.size(), 4u);
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < 4; ++i) {
        EXPECT_EQ(parts[i].index, i);
        EXPECT_EQ(parts[i].offset, i * (512u << 10));
        EXPECT_EQ(parts[i].bytes, 512u << 10);
        EXPECT_EQ(parts[i].stored.data(), bytes.data() + at) << "the frames one after the other";
        at += parts[i].stored.size();
    }
    EXPECT_EQ(at, bytes.size());
    std::vector<std::byte> page(2u << 20);
    std::vector<std::thread> threads;
    for (std::size_t i = 4; i-- > 0;) {
        threads.emplace_back([&, i] { archive.decode_part(0, parts[i], page); });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_TRUE(page == written_page(0));
    std::vector<std::byte> whole(2u << 20);
    archive.decode_page(0, bytes, whole);
    EXPECT_TRUE(whole == page) << "decode_page decodes the parts one after the other";
}

TEST_F(PageArchivePartsTest, ARawPageIsOnePart) {
    write({});
    const PageArchive archive(path_);
    ASSERT_EQ(archive.stored_extent(1).encoding, PageEncoding::raw);
    const std::vector<std::byte> bytes = stored(archive, 1);
    const std::vector<StoredPart> parts = archive.split_stored(1, bytes);
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(parts[0].bytes, 2u << 20);
    std::vector<std::byte> page(2u << 20);
    archive.decode_part(1, parts[0], page);
    EXPECT_TRUE(page == test::random_page(2u << 20, 1));
}

// The most parts up to the one asked for that divide a page's tiles; one before version 4.
TEST_F(PageArchivePartsTest, AWriterMakesTheMostPartsThatAreWholeTiles) {
    struct Case {
        std::uint32_t tiles;
        std::uint32_t wanted;
        std::uint32_t version;
        std::uint32_t parts;
    };
    for (const Case& c : {Case{32, 4, 4, 4}, Case{32, 64, 4, 32}, Case{32, 1, 4, 1},
                          Case{6, 4, 4, 3}, Case{7, 4, 4, 1}, Case{32, 4, 3, 1}}) {
        SCOPED_TRACE(testing::Message()
                     << c.tiles << " tiles, " << c.wanted << " wanted, version " << c.version);
        write({.version = c.version, .parts_per_page = c.wanted},
              {2, std::uint64_t(c.tiles) * 4096, 4096, c.tiles});
        const PageArchive archive(path_);
        EXPECT_EQ(archive.parts_per_page(), c.parts);
        EXPECT_EQ(archive.split_stored(0, stored(archive, 0)).size(), c.parts);
        archive.check_all();
    }
}

TEST_F(PageArchivePartsTest, RefusesWhatIsNotAPartOfThePage) {
    for (std::uint32_t parts : {0u, 65u}) {
        EXPECT_NE(detail_of([&] { write({.parts_per_page = parts}); }, Errc::invalid_argument)
                      .find("parts_per_page is " + std::to_string(parts)),
                  std::string::npos);
    }
    write({});
    const PageArchive archive(path_);
    const std::vector<std::byte> bytes = stored(archive, 0);
    std::vector<std::byte> page(2u << 20);
    detail_of([&] { archive.split_stored(0, std::span(bytes).first(bytes.size() - 1)); },
              Errc::invalid_argument);
    detail_of([&] { archive.split_stored(3, bytes); }, Errc::out_of_range);
    StoredPart part = archive.split_stored(0, bytes)[1];
    part.index = 4;
    detail_of([&] { archive.decode_part(0, part, page); }, Errc::invalid_argument);
    part = archive.split_stored(0, bytes)[1];
    part.offset = 0;
    detail_of([&] { archive.decode_part(0, part, page); }, Errc::invalid_argument);
    part = archive.split_stored(0, bytes)[1];
    detail_of([&] { archive.decode_part(0, part, std::span(page).first(1u << 20)); },
              Errc::invalid_argument);
    // A part of the raw page given for a zstd page: its place is not one of the page's parts.
    const std::vector<std::byte> raw = stored(archive, 1);
    const StoredPart raw_part = archive.split_stored(1, raw)[0];
    detail_of([&] { archive.decode_part(0, raw_part, page); }, Errc::invalid_argument);
    // The raw page's part with fewer stored bytes than it decodes to: never read past them.
    StoredPart short_raw = raw_part;
    short_raw.stored = short_raw.stored.first(100);
    detail_of([&] { archive.decode_part(1, short_raw, page); }, Errc::invalid_argument);
}

// zstd's fast levels store more bytes that any reader decodes as it decodes level 1 (no format
// change); levels outside the writer's range are refused with the range.
TEST_F(PageArchivePartsTest, FastLevelsStoreMoreBytesThatDecodeToThePageWritten) {
    const ProceduralSource source(ProceduralSettings{7, 14});
    const std::uint64_t count = 8;
    auto stored_total = [&](int level) {
        write_procedural(source, count, {.zstd_level = level});
        const PageArchive archive(path_);
        archive.check_all();
        std::vector<std::byte> page(page_bytes), read(page_bytes);
        for (std::uint64_t i = 0; i < count; ++i) {
            source.fill_host(procedural_page(source, i, count), page);
            archive.read_page(i, read);
            EXPECT_TRUE(read == page) << "level " << level << ", page " << i;
        }
        return stored_bytes(archive, count);
    };
    const std::uint64_t one = stored_total(1);
    const std::uint64_t fast = stored_total(page_archive_fastest_zstd_level);
    EXPECT_GT(fast, one);
    for (int level :
         {page_archive_fastest_zstd_level - 1, 0, page_archive_smallest_zstd_level + 1}) {
        EXPECT_NE(detail_of([&] { write({.zstd_level = level}); }, Errc::invalid_argument)
                      .find("zstd_level is " + std::to_string(level) + ", -10 to -1 or 1 to 19"),
                  std::string::npos);
    }
}

// On texture pages four frames store about what one does: zstd's window is the part, not the
// page, and a texture's bytes repeat at shorter range (6 % more here). 16 pages of ProceduralSource
// from mip 0 to the tail of a 16Ki x 16Ki texture (as page_archive_zstd_levels_test.cpp measures).
TEST_F(PageArchivePartsTest, FourPartsStoreTexturePagesInAboutWhatOneFrameDoes) {
    const ProceduralSource source(ProceduralSettings{7, 14});
    const std::uint64_t count = 16;
    auto stored_total = [&](PageArchiveSettings settings) {
        write_procedural(source, count, settings);
        return stored_bytes(PageArchive(path_), count);
    };
    const std::uint64_t one = stored_total({.version = 3});
    const std::uint64_t four = stored_total({});
    std::cout << "stored bytes of 16 procedural pages: one frame a page " << one << ", four "
              << four << " (" << double(four) / double(one) << "x)\n";
    EXPECT_LT(double(four), double(one) * 1.10);
}

}  // namespace
}  // namespace vtpage::vt
