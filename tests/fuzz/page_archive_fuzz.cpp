// Fuzzes the page archive reader (PageArchive) with arbitrary files. Inputs are laid over a
// small valid archive written at start-up (three pages of 4 KiB: zstd, raw, zstd), the way
// baked_file_fuzz.cpp does:
//   input that starts with the magic   replaces the archive's first bytes (header, descriptor,
//                                      index, tile table, padding, then the first stored
//                                      pages); for even lengths every checksum (descriptor,
//                                      index, table, each page's stored bytes, header) is then
//                                      recomputed, so that the checks behind them (field
//                                      ranges, index entries, zstd frames) are reached too
//   any other input                    is the whole file (short, truncated, foreign files)
// Opening, check_all(), read_page() and the split read must either succeed or throw
// vtpage::Error.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_files.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::vt;

std::vector<std::byte> template_page(std::uint32_t seed, bool compressible) {
    std::vector<std::byte> page(4096);
    std::uint32_t state = seed;
    for (std::size_t i = 0; i < page.size(); ++i) {
        state = state * 1664525u + 1013904223u;
        page[i] = std::byte(compressible ? std::uint8_t(i / 64 + seed) : std::uint8_t(state >> 24));
    }
    return page;
}

// The template: corpus/page_archive/prefix-8192 is its first 8 KiB.
const std::vector<std::uint8_t>& template_file() {
    static const std::vector<std::uint8_t> bytes = [] {
        const std::string descriptor = "fuzz template";
        return fuzz::bytes_written_by([&](const std::string& path) {
            PageArchiveWriter writer(path, {3, 4096, 1024, 4},
                                     std::as_bytes(std::span(descriptor)));
            for (std::uint32_t p = 0; p < 3; ++p) writer.add_page(p, template_page(p, p != 1));
            writer.finish();
        });
    }();
    return bytes;
}

// The checksum of the header's version (archive_checksum) of file[offset, offset + size), or
// `otherwise` where that is not inside the file.
std::uint64_t checksum_of(std::uint32_t version, const std::vector<std::uint8_t>& file,
                          std::uint64_t offset, std::uint64_t size, std::uint64_t otherwise) {
    if (offset > file.size() || size > file.size() - offset) return otherwise;
    return archive_checksum(version,
                            std::as_bytes(std::span(file.data() + offset, std::size_t(size))));
}

// Makes every checksum of the file right for the bytes it now has.
void fix_checksums(std::vector<std::uint8_t>& file) {
    PageArchiveHeader h;
    std::memcpy(&h, file.data(), sizeof(h));
    if (h.page_count < file.size() && h.tiles_per_page < file.size()) {
        for (std::uint64_t p = 0; p < h.page_count; ++p) {
            const std::uint64_t at = h.index_offset + p * sizeof(PageIndexEntry);
            if (at > file.size() || file.size() - at < sizeof(PageIndexEntry)) break;
            PageIndexEntry e;
            std::memcpy(&e, file.data() + at, sizeof(e));
            e.stored_checksum =
                checksum_of(h.version, file, e.offset, e.stored_bytes, e.stored_checksum);
            std::memcpy(file.data() + at, &e, sizeof(e));
        }
        h.index_checksum = checksum_of(h.version, file, h.index_offset,
                                       h.page_count * sizeof(PageIndexEntry), h.index_checksum);
        if (h.version == 2) {
            h.table_checksum = checksum_of(h.version, file, h.table_offset,
                                           h.page_count * h.tiles_per_page * 8, h.table_checksum);
        }
    }
    h.descriptor_checksum = checksum_of(h.version, file, h.descriptor_offset, h.descriptor_bytes,
                                        h.descriptor_checksum);
    h.header_checksum = 0;
    h.header_checksum = archive_checksum(h.version, std::as_bytes(std::span(&h, 1)));
    std::memcpy(file.data(), &h, sizeof(h));
}

// The file the input describes (see the top of this file).
std::vector<std::uint8_t> file_for(const std::uint8_t* data, std::size_t size) {
    if (size < sizeof(page_archive_magic) ||
        std::memcmp(data, page_archive_magic, sizeof(page_archive_magic)) != 0) {
        return {data, data + size};
    }
    std::vector<std::uint8_t> file = template_file();
    std::memcpy(file.data(), data, std::min(size, file.size()));
    if (size % 2 == 0) fix_checksums(file);
    return file;
}

// Every page through read_page and through the split read; both must agree.
void read_every_page(const PageArchive& archive, int fd) {
    const PageArchiveShape shape = archive.shape();
    std::vector<std::byte> page(shape.page_bytes), again(shape.page_bytes), stored;
    for (std::uint64_t p = 0; p < shape.page_count; ++p) {
        try {
            archive.read_page(p, page);
        } catch (const Error&) {
            continue;
        }
        const StoredExtent extent = archive.stored_extent(p);
        stored.resize(extent.bytes);
        if (::pread(fd, stored.data(), stored.size(), off_t(extent.offset)) !=
            ssize_t(stored.size())) {
            std::abort();
        }
        archive.decode_page(p, stored, again);
        if (page != again) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<std::uint8_t> file = file_for(data, size);
    const fuzz::MemoryFile memory(file);
    try {
        const PageArchive archive(memory.path());
        read_every_page(archive, memory.fd());
        archive.check_all();
        archive.stored_extent(archive.shape().page_count);  // must throw out_of_range
        std::abort();
    } catch (const Error&) {}
    return 0;
}
