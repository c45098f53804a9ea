// Helpers shared by the page archive tests: small shapes, pages that do and do not compress,
// writing a whole archive, and editing one on disk (with its checksums made right again).
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vtpage/base/error.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"

namespace vtpage::test {

// Pages of 4 tiles of 1 KiB: small enough to flip every byte of an archive.
inline vt::PageArchiveShape small_shape(std::uint64_t page_count) {
    return {page_count, 4096, 1024, 4};
}

// A page that compresses well: slow ramps that differ by page and seed.
inline std::vector<std::byte> smooth_page(std::uint64_t bytes, std::uint64_t page,
                                          std::uint32_t seed = 1) {
    std::vector<std::byte> out(bytes);
    for (std::uint64_t i = 0; i < bytes; ++i) {
        out[i] = std::byte(std::uint8_t((i / 64 + page * 7 + seed * 13) ^ (i % 4)));
    }
    return out;
}

// A page that does not compress: random bytes.
inline std::vector<std::byte> random_page(std::uint64_t bytes, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::byte> out(bytes);
    for (std::uint64_t i = 0; i < bytes; i += 8) {
        const std::uint64_t word = random();
        std::memcpy(out.data() + i, &word, std::min<std::uint64_t>(8, bytes - i));
    }
    return out;
}

inline std::vector<std::byte> bytes_of(const std::string& text) {
    const auto span = std::as_bytes(std::span(text));
    return {span.begin(), span.end()};
}

// The detail of the vtpage::Error that call throws, after checking its code.
template <typename Call>
std::string detail_of(Call&& call, Errc code) {
    try {
        call();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), code) << error.what();
        return error.detail();
    }
    ADD_FAILURE() << "no error";
    return {};
}

inline std::vector<std::byte> read_file(const std::string& path) {
    std::vector<std::byte> bytes;
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return bytes;
    std::byte chunk[65536];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof(chunk))) > 0;) {
        bytes.insert(bytes.end(), chunk, chunk + n);
    }
    ::close(fd);
    return bytes;
}

inline void write_file(const std::string& path, std::span<const std::byte> bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    ::close(fd);
}

// An archive's bytes with access to its header and index, and a way to make its checksums
// right again after an edit (so that the checks behind them are reached).
struct ArchiveBytes {
    std::vector<std::byte> bytes;

    vt::PageArchiveHeader header() const {
        vt::PageArchiveHeader h;
        std::memcpy(&h, bytes.data(), sizeof(h));
        return h;
    }
    void set_header(vt::PageArchiveHeader h) { std::memcpy(bytes.data(), &h, sizeof(h)); }
    vt::PageIndexEntry entry(std::uint64_t page) const {
        vt::PageIndexEntry e;
        std::memcpy(&e, bytes.data() + header().index_offset + page * sizeof(e), sizeof(e));
        return e;
    }
    void set_entry(std::uint64_t page, const vt::PageIndexEntry& e) {
        std::memcpy(bytes.data() + header().index_offset + page * sizeof(e), &e, sizeof(e));
    }
    // The bytes at [offset, offset + size), or none where the file is shorter (a header under
    // test may say anything).
    std::span<const std::byte> region(std::uint64_t offset, std::uint64_t size) const {
        if (offset > bytes.size() || size > bytes.size() - offset) return {};
        return std::span(bytes).subspan(offset, size);
    }
    // Recomputes the checksum of page's stored bytes.
    void fix_stored_checksum(std::uint64_t page) {
        vt::PageIndexEntry e = entry(page);
        e.stored_checksum =
            vt::archive_checksum(header().version, region(e.offset, e.stored_bytes));
        set_entry(page, e);
    }
    // Recomputes the index, table (version 2) and header checksums, of the header's version.
    void fix_checksums() {
        vt::PageArchiveHeader h = header();
        const auto sum = [&](std::span<const std::byte> bytes) {
            return vt::archive_checksum(h.version, bytes);
        };
        h.index_checksum = sum(region(h.index_offset, h.page_count * sizeof(vt::PageIndexEntry)));
        if (h.version == 2) {
            h.table_checksum = sum(region(h.table_offset, h.page_count * h.tiles_per_page * 8));
        }
        h.header_checksum = 0;
        h.header_checksum = sum(std::as_bytes(std::span(&h, 1)));
        set_header(h);
    }
};

}  // namespace vtpage::test
