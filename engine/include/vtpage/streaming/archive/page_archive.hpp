// Page archives: baked texture format versions 2, 3 and 4. N pages of page_bytes each
// (uncompressed), a page made of tiles_per_page tiles of tile_bytes, each page stored
// zstd-compressed (or raw where compression does not shrink it), plus an opaque descriptor that
// the caller defines (the texture's description, at most 64 KiB). Every stored page starts on a
// 4 KiB boundary, so that a reader can fetch stored_extent() with O_DIRECT and decode elsewhere
// (decode_page, or split_stored and decode_part on several threads at once).
//
// File layout (little-endian; every byte is covered by a checksum or must be zero, so that a
// flipped bit anywhere is found, even one that zstd would ignore):
//   offset          bytes                  what
//   0               128                    PageArchiveHeader, magic "VTPGPACK", version 2, 3 or
//                                          4; its own checksum and those of descriptor, index,
//                                          table; in version 4 the parts per page
//   128             descriptor_bytes       the descriptor
//                   0 .. 7                 zero padding to a multiple of 8
//   index_offset    page_count x 40        the page index, PageIndexEntry per page, in page
//                                          order: offset, stored bytes, their checksum, page
//                                          bytes, encoding
//   table_offset    version 2: page_count  the checksum of every uncompressed tile, page order;
//                   x tpp x 8; version 3:  version 3 has no tile table (table_checksum is 0)
//                   none
//                   0 .. 4095              zero padding to data_offset (a multiple of 4096)
//   data_offset     ...                    the stored pages in any order, each at a multiple of
//                                          4096, zero padding between them and to file_bytes
//                                          (a multiple of 4096)
//
// Checksums (archive_checksum in format_checksum.hpp): version 2 uses checksum64 and checks a
// page twice, its stored bytes before decoding and each decoded tile against the table. Version
// 3 uses XXH3-64 (seed 0), which xxhsum -H3 and Python's xxhash compute, and checks a page once,
// its stored bytes before decoding: a zstd frame that passes the check decodes to what was
// written (zstd is deterministic), so a second hash of the decoded tiles finds nothing more.
// Version 4 is version 3 with a zstd page stored as parts_per_page zstd frames one after the
// other, frame k decoding to the page's bytes [k, k + 1) x page_bytes / parts_per_page, so that
// several threads decode one page at once (a page's decode binds how soon a view that needs few
// pages looks right). Each part is whole tiles. A raw page is one part. Writers write version
// 4; readers read 2, 3 and 4.
//
// zstd levels, measured on 16 pages of ProceduralSource::fill_host (2 MiB RGBA8 pages from mip 0
// to the tail of a 16Ki x 16Ki texture) and 4 random pages, one thread of an x86-64 build
// machine, zstd 1.5.4 (tests/streaming/page_archive_zstd_levels_test.cpp prints this table):
//   level  ratio  compress MB/s  decompress MB/s   random pages: ratio  compress MB/s
//   -10    4.33   1930           7447              1.00 (stored raw)    4489
//   -3     5.13   1423           6410              1.00 (stored raw)    4259
//   -1     5.62   1089           5506              1.00 (stored raw)    4385
//   1      6.50   910            3833              1.00 (stored raw)    4383
//   3      8.81   612            3563              1.00 (stored raw)    3507
//   6      9.55   255            3125              1.00 (stored raw)     289
//   9      9.60   160            3449              1.00 (stored raw)     146
//   19     11.45    8            2214              1.00 (stored raw)       7
// The default is level 3: decompression, which every read pays, is as fast as at any level;
// level 6 would store 8% fewer bytes for 2.4 times the compression time, level 19 23% fewer
// for 75 times (hours for a large texture). Random pages never shrink and are stored raw.
// zstd's fast levels (negative) store more and decode faster: on these smooth pages -3 decodes
// 1.7 times as fast as 1 for 27% more bytes; on noisier pages (vtpage-make-texture-set's RGBA8,
// 2.07 to 1 at level 1) 1.2 times as fast for 23% more (1,218 against 1,018 MB/s, zstd's own
// benchmark in 256 KiB blocks). Worth it where decoding binds and reads are cheap (the page
// cache, fast NVMe); docs/streaming.md measures it on a view's cuts.
//
// Errors: a file that cannot be opened, read or written is io_error, and so is one that is not
// a regular file (refused before anything could block on a FIFO). Every check that fails on the
// bytes of the file is corrupt_data, its detail naming the page (and tile) where there is one
// and what is wrong. A page number past the end is out_of_range; a destination smaller than a
// page, or stored bytes of the wrong size, invalid_argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vtpage/streaming/archive/stored_part.hpp"

namespace vtpage::vt {

inline constexpr char page_archive_magic[8] = {'V', 'T', 'P', 'G', 'P', 'A', 'C', 'K'};
// The version writers write; readers also read page_archive_oldest_version.
inline constexpr std::uint32_t page_archive_version = 4;
inline constexpr std::uint32_t page_archive_oldest_version = 2;
inline constexpr std::uint64_t page_archive_alignment = 4096;
inline constexpr std::uint64_t page_archive_max_descriptor_bytes = 64ull * 1024;
inline constexpr std::uint64_t page_archive_max_page_bytes = 64ull * 1024 * 1024;
// The most tiles an archive holds (page_count x tiles_per_page): a 2 GiB checksum table.
inline constexpr std::uint64_t page_archive_max_tiles = std::uint64_t(1) << 28;
// Version 4: the most parts a page is stored in, and how many writers make by default (256 KiB
// parts of a 2 MiB page: 4 to 8 tiles each; on an H200 they decoded 27% faster than 512 KiB
// parts, for 6.6% more stored bytes: docs/streaming.md, "Format version 4").
inline constexpr std::uint32_t page_archive_max_parts_per_page = 64;
// The zstd levels a writer takes: zstd's fast levels from this one to -1 (less compression,
// faster decoding), and 1 to 19; not 0 (zstd's "default", which says nothing).
inline constexpr int page_archive_fastest_zstd_level = -10;
inline constexpr int page_archive_smallest_zstd_level = 19;
inline constexpr std::uint32_t page_archive_default_parts_per_page = 8;

struct PageArchiveHeader {
    char magic[8] = {};
    std::uint32_t version = 0;
    std::uint32_t header_bytes = 0;  // sizeof(PageArchiveHeader)
    std::uint64_t page_count = 0;
    std::uint64_t page_bytes = 0;  // tile_bytes x tiles_per_page
    std::uint32_t tile_bytes = 0;
    std::uint32_t tiles_per_page = 0;
    std::uint64_t descriptor_offset = 0;  // 128
    std::uint64_t descriptor_bytes = 0;
    std::uint64_t index_offset = 0;
    std::uint64_t table_offset = 0;
    std::uint64_t data_offset = 0;
    std::uint64_t file_bytes = 0;
    std::uint64_t descriptor_checksum = 0;
    std::uint64_t index_checksum = 0;
    std::uint64_t table_checksum = 0;   // 0 in version 3 (no table)
    std::uint64_t header_checksum = 0;  // of the header with this field zero
    // Version 4: 1 to 64, dividing tiles_per_page; before version 4 a reserved zero.
    std::uint32_t parts_per_page = 0;
    std::uint8_t reserved[4] = {};
};
static_assert(sizeof(PageArchiveHeader) == 128, "the header is 128 bytes on disk");

enum class PageEncoding : std::uint32_t { raw = 0, zstd = 1 };

struct PageIndexEntry {
    std::uint64_t offset = 0;           // a multiple of 4096, at or past data_offset
    std::uint64_t stored_bytes = 0;     // page_bytes when raw, its zstd frames' size otherwise
    std::uint64_t stored_checksum = 0;  // archive_checksum of the stored bytes
    std::uint64_t page_bytes = 0;       // the page uncompressed: the header's page_bytes
    std::uint32_t encoding = 0;         // PageEncoding
    std::uint32_t reserved = 0;
};
static_assert(sizeof(PageIndexEntry) == 40, "an index entry is 40 bytes on disk");

struct PageArchiveShape {
    std::uint64_t page_count = 0;
    std::uint64_t page_bytes = 0;
    std::uint32_t tile_bytes = 0;
    std::uint32_t tiles_per_page = 0;
    bool operator==(const PageArchiveShape&) const = default;
};

struct PageArchiveSettings {
    // page_archive_fastest_zstd_level to page_archive_smallest_zstd_level, not 0, else
    // invalid_argument; see the measurements at the top of this file.
    int zstd_level = 3;
    // 4, or 3 or 2 for a file that older readers open (tests of the older readers).
    std::uint32_t version = page_archive_version;
    // Version 4: a zstd page is stored in the most parts, up to this, that divide tiles_per_page
    // (1 to 64); versions 2 and 3 store one frame.
    std::uint32_t parts_per_page = page_archive_default_parts_per_page;
};

// Writes an archive as `<path>.partial` (created exclusively, never through a symbolic link)
// and renames it over path in finish(). Pages may come in any order and from several threads.
// A writer destroyed before finish() succeeds removes its partial file.
class PageArchiveWriter {
public:
    // invalid_argument for a shape that is empty, inconsistent (page_bytes is not tile_bytes x
    // tiles_per_page) or past the limits above, a descriptor over 64 KiB, a version other than
    // 2 to 4 or parts_per_page outside 1 to 64; io_error when the partial file cannot be created.
    PageArchiveWriter(const std::string& path, PageArchiveShape shape,
                      std::span<const std::byte> descriptor, PageArchiveSettings settings = {});
    ~PageArchiveWriter();
    PageArchiveWriter(const PageArchiveWriter&) = delete;
    PageArchiveWriter& operator=(const PageArchiveWriter&) = delete;

    // Compresses and writes one page (thread-safe). invalid_argument for a page out of range,
    // one added before, bytes not page_bytes long, or after finish(); io_error on a failed write
    // (finish() then refuses).
    void add_page(std::uint64_t page, std::span<const std::byte> bytes);
    // Writes index, checksum table and header, fsyncs and renames the file into place.
    // invalid_argument naming the first page not added; io_error on failure (nothing is left).
    void finish();

    struct State;  // defined in the implementation only

private:
    std::unique_ptr<State> state_;
};

// Where a page's stored bytes are: what an external reader fetches for decode_page.
struct StoredExtent {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    PageEncoding encoding = PageEncoding::raw;
    std::uint64_t checksum = 0;  // archive_checksum of the stored bytes (decode_page checks it)
};

// An archive opened for reading. Opening checks everything short of the pages: the header and
// its checksum, every field against the others and the file's size, the descriptor, index and
// table checksums, every index entry (inside the data, aligned, not overlapping, not larger
// than zstd's bound) and the padding. Reads check the stored bytes' checksum, decode, and in
// version 2 check every tile's checksum. Thread-safe (pread).
class PageArchive {
public:
    explicit PageArchive(const std::string& path);
    ~PageArchive();
    PageArchive(const PageArchive&) = delete;
    PageArchive& operator=(const PageArchive&) = delete;

    const std::string& path() const noexcept;
    // The open file (read-only), for readers that fetch stored_extent() themselves.
    int fd() const noexcept;
    PageArchiveShape shape() const noexcept;
    // 2, 3 or 4: the file's format version (its checksums: archive_checksum of this version).
    std::uint32_t version() const noexcept;
    // The parts a zstd page is stored in: the header's in version 4, 1 before.
    std::uint32_t parts_per_page() const noexcept;
    std::span<const std::byte> descriptor() const noexcept;

    // Reads, decodes and verifies one page into the first page_bytes of destination.
    void read_page(std::uint64_t page, std::span<std::byte> destination) const;
    // The split read: where the stored bytes are, and their decoding (with the checks) once
    // read. decode_page wants exactly stored_extent(page).bytes of stored bytes.
    StoredExtent stored_extent(std::uint64_t page) const;
    void decode_page(std::uint64_t page, std::span<const std::byte> stored,
                     std::span<std::byte> destination) const;
    // decode_page in parts, on as many threads as there are parts: split_stored checks the
    // stored bytes once (their checksum; in version 4 that they are parts_per_page frames, each
    // decoding to its part) and says where each part is; decode_part decodes one into its place
    // in destination (a page: the part's bytes at its offset). A raw page, and a page of a file
    // before version 4, is one part. decode_part is for parts split_stored gave for this page.
    std::vector<StoredPart> split_stored(std::uint64_t page,
                                         std::span<const std::byte> stored) const;
    void decode_part(std::uint64_t page, const StoredPart& part,
                     std::span<std::byte> destination) const;
    // Reads and verifies every page and the padding between them; progress(fraction) after
    // each page.
    void check_all(const std::function<void(double fraction)>& progress = {}) const;

    struct State;  // defined in the implementation only

private:
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::vt
