// Damaged page archives: every byte flipped in turn, truncations, headers and index entries
// rewritten with fresh checksums, and zstd frames that are valid but of the wrong size or not
// frames at all. Each must be corrupt_data naming the page (and tile or part) where there is one.
// Every test runs on an archive of version 2 (checksum64, tile table), of version 3 (XXH3, none)
// and of version 4 (XXH3, a zstd page stored as four frames, one per 1 KiB part).
#include <gtest/gtest.h>

#include <zstd.h>

#include "../support/temporary_folder.hpp"
#include "page_archive_test_support.hpp"

namespace vtpage::vt {
namespace {

using test::detail_of;

class PageArchiveCorruptionTest : public testing::TestWithParam<std::uint32_t> {
protected:
    void SetUp() override {
        // Page 0 compresses, page 1 is random (raw), page 2 compresses; the descriptor's 11
        // bytes leave 5 bytes of padding before the index.
        PageArchiveSettings settings;
        settings.version = version();
        PageArchiveWriter writer(path_, test::small_shape(3), test::bytes_of("descriptor!"),
                                 settings);
        writer.add_page(0, test::smooth_page(4096, 0));
        writer.add_page(2, test::smooth_page(4096, 2));
        writer.add_page(1, test::random_page(4096, 1));
        writer.finish();
        good_.bytes = test::read_file(path_);
        ASSERT_EQ(good_.header().version, version());
    }
    std::uint32_t version() const { return GetParam(); }
    // How an error names page 0's first part: the page alone before version 4.
    std::string page_0_part(int part) const {
        return version() < 4 ? std::string("page 0: ")
                             : detail::concat("page 0, part ", part, ": ");
    }
    // The detail of the corrupt_data that opening and checking `file` throws.
    std::string damage(const test::ArchiveBytes& file) {
        test::write_file(path_, file.bytes);
        return detail_of(
            [&] {
                const PageArchive archive(path_);
                archive.check_all();
            },
            Errc::corrupt_data);
    }
    // Whether opening and checking `file` throws corrupt_data (and nothing else).
    bool detected(const test::ArchiveBytes& file) {
        test::write_file(path_, file.bytes);
        return detected_in_place();
    }
    bool detected_in_place() {
        try {
            const PageArchive archive(path_);
            archive.check_all();
        } catch (const Error& error) {
            return error.code() == Errc::corrupt_data;
        }
        return false;
    }

    test::TemporaryFolder folder_;
    std::string path_ = folder_.file("damaged.vtpa");
    test::ArchiveBytes good_;
};

#define EXPECT_MENTIONS(detail, words) \
    EXPECT_NE((detail).find(words), std::string::npos) << "detail: " << (detail)

// Every byte of the file, each of two bits in turn (flipped in place, then back).
TEST_P(PageArchiveCorruptionTest, EveryFlippedByteIsFound) {
    ASSERT_FALSE(detected(good_));
    const int fd = ::open(path_.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    std::size_t missed = 0;
    for (std::size_t offset = 0; offset < good_.bytes.size() && missed < 10; ++offset) {
        for (std::uint8_t bit : {0x01, 0x10}) {
            const std::byte flipped = good_.bytes[offset] ^ std::byte{bit};
            ASSERT_EQ(::pwrite(fd, &flipped, 1, off_t(offset)), 1);
            if (!detected_in_place()) {
                ADD_FAILURE() << "bit " << int(bit) << " of byte " << offset << " is not found";
                ++missed;
            }
            ASSERT_EQ(::pwrite(fd, &good_.bytes[offset], 1, off_t(offset)), 1);
        }
    }
    ::close(fd);
    EXPECT_FALSE(detected_in_place());
}

TEST_P(PageArchiveCorruptionTest, EachRegionNamesWhatIsWrong) {
    const PageArchiveHeader h = good_.header();
    auto flip = [&](std::uint64_t offset) {
        test::ArchiveBytes file = good_;
        file.bytes[offset] ^= std::byte{1};
        return damage(file);
    };
    EXPECT_MENTIONS(flip(20), "header checksum mismatch");
    EXPECT_MENTIONS(flip(h.descriptor_offset + 3), "descriptor checksum mismatch");
    EXPECT_MENTIONS(flip(h.descriptor_offset + 12), "after the descriptor");
    const std::uint64_t entry_1 = h.index_offset + sizeof(PageIndexEntry);
    EXPECT_MENTIONS(flip(entry_1 + 16), "index checksum mismatch");  // its stored checksum
    EXPECT_MENTIONS(flip(entry_1 + 1), "page 1: bad index entry");   // its offset
    if (version() == 2) {
        EXPECT_MENTIONS(flip(h.table_offset + 40), "tile checksum table checksum mismatch");
        EXPECT_MENTIONS(flip(h.table_offset + 3 * 4 * 8), "after the tile checksum table");
    } else {
        EXPECT_EQ(h.table_offset, h.index_offset + 3 * sizeof(PageIndexEntry));  // no table
        EXPECT_MENTIONS(flip(h.table_offset + 8), "after the index");
    }
    const PageIndexEntry zstd_page = good_.entry(0), raw_page = good_.entry(1);
    EXPECT_MENTIONS(flip(zstd_page.offset + zstd_page.stored_bytes / 2),
                    "page 0: stored bytes checksum mismatch");
    EXPECT_MENTIONS(flip(raw_page.offset + 3000), "page 1: stored bytes checksum mismatch");
    EXPECT_MENTIONS(flip(zstd_page.offset + zstd_page.stored_bytes + 1),
                    "between the stored pages");
}

TEST_P(PageArchiveCorruptionTest, TruncationAnywhereIsFound) {
    const PageArchiveHeader h = good_.header();
    for (std::uint64_t size : {std::uint64_t(0), std::uint64_t(7), std::uint64_t(127),
                               std::uint64_t(128), h.index_offset + 5, h.table_offset + 9,
                               h.data_offset, h.data_offset + 100, h.file_bytes - 1}) {
        test::ArchiveBytes file = good_;
        file.bytes.resize(size);
        EXPECT_MENTIONS(damage(file), "truncated");
    }
    test::ArchiveBytes longer = good_;
    longer.bytes.resize(longer.bytes.size() + 4096);
    EXPECT_MENTIONS(damage(longer), "size mismatch");
}

TEST_P(PageArchiveCorruptionTest, AFileCutShortAfterOpeningIsCorruptDataNamingThePage) {
    const PageArchive archive(path_);
    ASSERT_EQ(::truncate(path_.c_str(), off_t(good_.header().data_offset)), 0);
    std::vector<std::byte> page(4096);
    EXPECT_MENTIONS(detail_of([&] { archive.read_page(1, page); }, Errc::corrupt_data),
                    "truncated: page 1 ends past the end of the file");
}

TEST_P(PageArchiveCorruptionTest, HeaderFieldsWithFreshChecksumsAreChecked) {
    auto rewrite = [&](auto&& edit) {
        test::ArchiveBytes file = good_;
        PageArchiveHeader h = file.header();
        edit(h);
        file.set_header(h);
        file.fix_checksums();
        return damage(file);
    };
    EXPECT_MENTIONS(rewrite([](auto& h) { h.version = 1; }), "unsupported version 1");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.version = page_archive_version + 1; }),
                    detail::concat("unsupported version ", page_archive_version + 1));
    if (version() < 4) {
        EXPECT_MENTIONS(rewrite([](auto& h) { h.parts_per_page = 4; }),
                        "parts_per_page is 4, zero before version 4");
    } else {
        EXPECT_EQ(good_.header().parts_per_page, 4u);
        for (std::uint32_t parts : {0u, 3u, 8u, 65u}) {
            EXPECT_MENTIONS(
                rewrite([&](auto& h) { h.parts_per_page = parts; }),
                detail::concat("parts_per_page is ", parts, ": 1 to 64 dividing the 4"));
        }
        // A version-4 header said to be version 3: its parts field is not zero there.
        EXPECT_MENTIONS(rewrite([](auto& h) { h.version = 3; }), "zero before version 4");
    }
    if (version() >= 3) {
        EXPECT_MENTIONS(rewrite([](auto& h) { h.table_checksum = 1; }), "table_checksum");
        // A version-3 header said to be version 2: the descriptor's XXH3 is not its checksum64.
        if (version() == 3) {
            EXPECT_MENTIONS(rewrite([](auto& h) { h.version = 2; }),
                            "descriptor checksum mismatch");
        }
    }
    EXPECT_MENTIONS(rewrite([](auto& h) { h.data_offset += 4096; }), "data_offset");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.page_count = 1000; }), "table_offset");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.page_count = UINT64_MAX / 8; }), "pages of");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.page_bytes = 8192; }), "not tile_bytes");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.descriptor_bytes = 1u << 30; }), "descriptor_bytes");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.file_bytes += 4096; }), "truncated");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.reserved[3] = 1; }), "reserved");
    EXPECT_MENTIONS(rewrite([](auto& h) { h.magic[0] = 'X'; }), "bad magic");
}

TEST_P(PageArchiveCorruptionTest, IndexEntriesWithFreshChecksumsAreChecked) {
    auto rewrite = [&](std::uint64_t page, auto&& edit) {
        test::ArchiveBytes file = good_;
        PageIndexEntry e = file.entry(page);
        edit(e);
        file.set_entry(page, e);
        file.fix_checksums();
        return damage(file);
    };
    const PageIndexEntry first = good_.entry(0);
    EXPECT_MENTIONS(rewrite(2, [&](auto& e) { e.offset = first.offset; }), "overlap those of page");
    EXPECT_MENTIONS(rewrite(2, [](auto& e) { e.offset += 8; }), "page 2: bad index entry");
    EXPECT_MENTIONS(rewrite(1, [](auto& e) { e.offset += 4096 * 100; }), "page 1: bad index");
    EXPECT_MENTIONS(rewrite(1, [](auto& e) { e.offset = UINT64_MAX - 4095; }), "page 1: bad");
    EXPECT_MENTIONS(rewrite(0, [](auto& e) { e.offset = 0; }), "page 0: bad index entry");
    EXPECT_MENTIONS(rewrite(1, [](auto& e) { e.stored_bytes = 100; }), "page 1: bad index");
    EXPECT_MENTIONS(rewrite(0, [](auto& e) { e.stored_bytes = 5000; }), "page 0: bad index");
    EXPECT_MENTIONS(rewrite(0, [](auto& e) { e.stored_bytes = 0; }), "page 0: bad index");
    EXPECT_MENTIONS(rewrite(0, [](auto& e) { e.encoding = 2; }), "page 0: bad index entry");
    EXPECT_MENTIONS(rewrite(0, [](auto& e) { e.page_bytes = 8192; }), "page 0: bad index");
    // A compressed page read as raw, and a raw page read as zstd frames.
    EXPECT_MENTIONS(rewrite(2, [](auto& e) { e.encoding = 0; }), "page 2: bad index entry");
    EXPECT_MENTIONS(rewrite(1, [](auto& e) { e.encoding = 1; }),
                    version() < 4 ? "page 1: bad zstd frame" : "page 1, part 0: bad zstd frame");
}

// Page 0's stored bytes replaced by `stored` (its index entry and checksums to match).
test::ArchiveBytes with_stored_page_0(const test::ArchiveBytes& good,
                                      std::span<const std::byte> stored) {
    test::ArchiveBytes file = good;
    PageIndexEntry e = file.entry(0);
    EXPECT_LE(stored.size(), 4096u);
    std::fill_n(file.bytes.begin() + std::ptrdiff_t(e.offset), 4096, std::byte{0});
    std::copy(stored.begin(), stored.end(), file.bytes.begin() + std::ptrdiff_t(e.offset));
    e.stored_bytes = stored.size();
    file.set_entry(0, e);
    file.fix_stored_checksum(0);
    file.fix_checksums();
    return file;
}

std::vector<std::byte> zstd_frame(std::span<const std::byte> bytes) {
    std::vector<std::byte> frame(ZSTD_compressBound(bytes.size()));
    const std::size_t size =
        ZSTD_compress(frame.data(), frame.size(), bytes.data(), bytes.size(), 3);
    EXPECT_FALSE(ZSTD_isError(size));
    frame.resize(size);
    return frame;
}

// Frames of `page` cut into `parts` equal parts, one after the other.
std::vector<std::byte> zstd_frames(std::span<const std::byte> page, std::size_t parts) {
    std::vector<std::byte> out;
    const std::size_t part = page.size() / parts;
    for (std::size_t i = 0; i < parts; ++i) {
        const auto frame = zstd_frame(page.subspan(i * part, part));
        out.insert(out.end(), frame.begin(), frame.end());
    }
    return out;
}

TEST_P(PageArchiveCorruptionTest, BadZstdFramesAreCorruptDataNamingThePage) {
    const auto page = test::smooth_page(4096, 0);
    EXPECT_MENTIONS(damage(with_stored_page_0(good_, zstd_frame(std::span(page).first(2048)))),
                    page_0_part(0) + (version() < 4 ? "the zstd frame decodes to 2048 bytes, "
                                                      "the page is 4096"
                                                    : "the zstd frame decodes to 2048 bytes, "
                                                      "a part is 1024"));
    EXPECT_MENTIONS(damage(with_stored_page_0(good_, test::random_page(300, 9))),
                    page_0_part(0) + "bad zstd frame");
    // The page's own frames with bytes after them, and two frames that make a page together.
    std::vector<std::byte> trailing = zstd_frames(page, version() < 4 ? 1 : 4);
    trailing.resize(trailing.size() + 8);
    EXPECT_MENTIONS(damage(with_stored_page_0(good_, trailing)), "page 0: bad zstd frame");
    std::vector<std::byte> two = zstd_frames(page, 2);
    EXPECT_MENTIONS(damage(with_stored_page_0(good_, two)), "page 0");
    if (version() >= 4) {
        // Three of the four frames, a fifth after them, and a frame cut short.
        const auto parts = zstd_frames(page, 4);
        const std::size_t first_three =
            parts.size() - zstd_frame(std::span(page).last(1024)).size();
        EXPECT_MENTIONS(damage(with_stored_page_0(good_, std::span(parts).first(first_three))),
                        "page 0, part 3: bad zstd frames: the stored bytes end after 3 of 4");
        std::vector<std::byte> five = parts;
        const auto extra = zstd_frame(std::span(page).first(1024));
        five.insert(five.end(), extra.begin(), extra.end());
        EXPECT_MENTIONS(damage(with_stored_page_0(good_, five)),
                        "page 0: bad zstd frames: they do not fill the");
        EXPECT_MENTIONS(damage(with_stored_page_0(good_, std::span(parts).first(parts.size() - 2))),
                        "page 0, part 3: bad zstd frame: it ends past the");
    }
    // A frame of the right size with other bytes in it: version 2's tile checksums catch it.
    // Versions 3 and 4 have only the stored bytes' checksum, rewritten here: such a file is a valid
    // one with other content, as any file rewritten with fresh checksums.
    const auto other =
        with_stored_page_0(good_, zstd_frames(test::smooth_page(4096, 5), version() < 4 ? 1 : 4));
    if (version() == 2) {
        EXPECT_MENTIONS(damage(other), "page 0, tile 0: tile checksum mismatch");
    } else {
        EXPECT_FALSE(detected(other));
    }
    // The same frames through the split read.
    const test::ArchiveBytes bad = with_stored_page_0(good_, test::random_page(300, 9));
    test::write_file(path_, bad.bytes);
    const PageArchive archive(path_);
    const StoredExtent extent = archive.stored_extent(0);
    std::vector<std::byte> out(4096);
    EXPECT_MENTIONS(
        detail_of([&] { archive.decode_page(0, bad.region(extent.offset, extent.bytes), out); },
                  Errc::corrupt_data),
        page_0_part(0) + "bad zstd frame");
}

INSTANTIATE_TEST_SUITE_P(Versions, PageArchiveCorruptionTest, testing::Values(2u, 3u, 4u),
                         [](const testing::TestParamInfo<std::uint32_t>& version) {
                             return "v" + std::to_string(version.param);
                         });

}  // namespace
}  // namespace vtpage::vt
