// The format's promise, byte by byte: a flipped bit anywhere in a baked file is found by
// opening it and checking every page (what `vtpage-bake --check` does). Every byte of the
// header, the checksum table and the padding after it is flipped in turn; the data, 2 MiB a
// page, is flipped at a stride that lands in every tile at varying offsets. A header rewritten
// with a fresh checksum is caught by the fields that have one right value. The same for a baked
// texture of version 4 (a page archive with XXH3 checksums, a descriptor and pages stored in
// parts): every byte of it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include "../support/expect_error.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"

namespace vtpage::vt {
namespace {

// Whether opening and checking the whole file throws corrupt_data.
bool detected(const std::string& path) {
    try {
        const BakedTextureFile file(path);
        file.check_all();
        return false;
    } catch (const Error& error) {
        return error.code() == Errc::corrupt_data;
    }
}

class BakedFileEveryByteTest : public testing::Test {
protected:
    void SetUp() override {
        path_ = folder_.file("small.vtex");
        bake_texture(test::make_test_image(37, 23, 5), path_);  // one page: all of it the tail
        header_ = BakedTextureFile(path_).header();
        fd_ = ::open(path_.c_str(), O_RDWR);
        ASSERT_GE(fd_, 0);
    }
    void TearDown() override { ::close(fd_); }

    // Flips bit `bit` of the byte at offset; flipping again restores it.
    void flip(std::uint64_t offset, int bit) {
        std::uint8_t byte = 0;
        ASSERT_EQ(::pread(fd_, &byte, 1, off_t(offset)), 1);
        byte ^= std::uint8_t(1u << bit);
        ASSERT_EQ(::pwrite(fd_, &byte, 1, off_t(offset)), 1);
    }
    void expect_flip_detected(std::uint64_t offset) {
        const int bit = int(offset % 8);
        flip(offset, bit);
        EXPECT_TRUE(detected(path_)) << "byte " << offset << " bit " << bit;
        flip(offset, bit);
    }
    // Writes a header with `change` applied and a checksum that matches it.
    void rewrite_header(const std::function<void(BakedHeader&)>& change) {
        BakedHeader header = header_;
        change(header);
        header.header_checksum = 0;
        header.header_checksum = checksum64(std::as_bytes(std::span(&header, 1)));
        ASSERT_EQ(::pwrite(fd_, &header, sizeof(header), 0), ssize_t(sizeof(header)));
    }

    test::TemporaryFolder folder_;
    std::string path_;
    BakedHeader header_;
    int fd_ = -1;
};

TEST_F(BakedFileEveryByteTest, TheUntouchedFileChecksClean) { EXPECT_FALSE(detected(path_)); }

TEST_F(BakedFileEveryByteTest, EveryByteBeforeTheDataIsCovered) {
    ASSERT_EQ(header_.page_count, 1u);
    for (std::uint64_t offset = 0; offset < header_.data_offset; ++offset) {
        expect_flip_detected(offset);
        if (HasFailure()) return;  // one message, not thousands
    }
    EXPECT_FALSE(detected(path_));
}

TEST_F(BakedFileEveryByteTest, EveryTileOfTheDataIsCovered) {
    // 4099 is prime: the flips fall at every offset modulo small powers of two, and at least
    // 15 land in each 64 KiB tile, the last byte of the file included.
    for (std::uint64_t offset = header_.data_offset; offset < header_.file_bytes; offset += 4099) {
        expect_flip_detected(offset);
        if (HasFailure()) return;
    }
    expect_flip_detected(header_.file_bytes - 1);
    EXPECT_FALSE(detected(path_));
}

TEST_F(BakedFileEveryByteTest, HeaderFieldsWithAFreshChecksumAreStillChecked) {
    const std::vector<std::pair<std::string, std::function<void(BakedHeader&)>>> changes = {
        {"flags", [](BakedHeader& h) { h.flags = 1; }},
        {"reserved", [](BakedHeader& h) { h.reserved[7] = 1; }},
        {"source_width", [](BakedHeader& h) { h.source_width = 0; }},
        {"source_width", [](BakedHeader& h) { h.source_width = 65; }},  // pads to 128, not 64
        {"source_width", [](BakedHeader& h) { h.source_width = 32; }},  // 32 x 23: 32
        {"source_height", [](BakedHeader& h) { h.source_height = 65; }},
        {"source_height", [](BakedHeader& h) { h.source_height = 0xffffffffu; }},
    };
    for (const auto& [field, change] : changes) {
        rewrite_header(change);
        EXPECT_TRUE(detected(path_)) << field;
    }
    rewrite_header([](BakedHeader&) {});
    EXPECT_FALSE(detected(path_));
}

// Version 3: one page of rgba8 (zstd-compressed to a few KiB), small enough to flip every byte.
TEST(BakedArchiveEveryByteTest, EveryByteOfAVersion4FileIsCovered) {
    test::TemporaryFolder folder;
    const std::string path = folder.file("small-v3.vtex");
    test::write_rgba8_archive(test::make_test_image(37, 23, 5), path);
    ASSERT_EQ(baked_file_version(path), 4);
    auto found = [&] {
        try {
            BakedTextureArchive(path).check_all();
            return false;
        } catch (const Error& error) {
            return error.code() == Errc::corrupt_data;
        }
    };
    ASSERT_FALSE(found());
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    const off_t size = ::lseek(fd, 0, SEEK_END);
    ASSERT_LT(size, 64 * 1024) << "small enough to flip every byte";
    for (off_t offset = 0; offset < size && !HasFailure(); ++offset) {
        std::uint8_t byte = 0;
        ASSERT_EQ(::pread(fd, &byte, 1, offset), 1);
        const std::uint8_t flipped = byte ^ std::uint8_t(1u << (offset % 8));
        ASSERT_EQ(::pwrite(fd, &flipped, 1, offset), 1);
        EXPECT_TRUE(found()) << "byte " << offset << " bit " << offset % 8;
        ASSERT_EQ(::pwrite(fd, &byte, 1, offset), 1);
    }
    ::close(fd);
    EXPECT_FALSE(found());
}

}  // namespace
}  // namespace vtpage::vt
