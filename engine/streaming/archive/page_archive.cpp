// PageArchive: opening checks every byte before the data and every index entry; reads check the
// stored bytes, find the frames of their parts (version 4), decode, and in version 2 check each
// tile. Nothing is allocated from a field before
// the field is checked against the file's real size or the format's limits.
#include "vtpage/streaming/archive/page_archive.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include "streaming/archive/file_io.hpp"
#include "streaming/archive/page_archive_format.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"

namespace vtpage::vt {

static_assert(std::endian::native == std::endian::little,
              "the archive is little-endian and read with plain copies");

namespace {
constexpr const char* reader_operation = "PageArchive";
}  // namespace

struct PageArchive::State {
    std::string path;
    UniqueFd fd;
    std::uint64_t file_bytes = 0;
    PageArchiveHeader header;
    PageArchiveShape shape;
    std::vector<std::byte> descriptor;
    std::vector<PageIndexEntry> index;
    std::vector<std::uint64_t> table;
    mutable archive::DecompressionContexts contexts;

    [[noreturn]] void corrupt(const std::string& problem) const {
        throw Error(Errc::corrupt_data, reader_operation, problem, detail::concat("path=", path));
    }
    // Reads a region that opening checked lies inside the file.
    void read(void* destination, std::uint64_t bytes, std::uint64_t offset,
              const std::string& what) const {
        if (!file_io::read_exact(fd.get(), destination, bytes, offset, reader_operation, path)) {
            corrupt(detail::concat("truncated: ", what, " ends past the end of the file"));
        }
    }
    void read_header();
    void check_header() const;
    std::vector<std::byte> read_region(std::uint64_t offset, std::uint64_t bytes,
                                       std::uint64_t checksum, const char* what) const;
    void check_zero(std::uint64_t from, std::uint64_t to, const char* where) const;
    void read_index();
    void check_entry(std::uint64_t page, const PageIndexEntry& entry) const;
    void check_overlaps() const;
    void read_table();
    void check_page_argument(const char* operation, std::uint64_t page,
                             std::size_t destination_bytes) const;
    // The zstd frames a page is stored in: 1 before version 4.
    std::uint32_t parts() const { return header.version >= 4 ? header.parts_per_page : 1; }
    std::vector<StoredPart> split(std::uint64_t page, std::span<const std::byte> stored) const;
    StoredPart frame_at(std::uint64_t page, std::span<const std::byte> rest,
                        std::uint32_t part) const;
    void decode_part(std::uint64_t page, const StoredPart& part,
                     std::span<std::byte> destination) const;
    void decode(std::uint64_t page, std::span<const std::byte> stored,
                std::span<std::byte> destination) const;
    void verify_tiles(std::uint64_t page, std::span<const std::byte> bytes) const;
    std::uint64_t checksum(std::span<const std::byte> bytes) const {
        return archive_checksum(header.version, bytes);
    }
};

void PageArchive::State::read_header() {
    if (file_bytes < sizeof(PageArchiveHeader)) {
        corrupt(detail::concat("truncated: the file has ", file_bytes, " bytes, less than the ",
                               sizeof(PageArchiveHeader), "-byte header"));
    }
    read(&header, sizeof(header), 0, "the header");
    if (std::memcmp(header.magic, page_archive_magic, sizeof(header.magic)) != 0) {
        corrupt("bad magic: not a vtpage page archive");
    }
    if (header.version < page_archive_oldest_version || header.version > page_archive_version) {
        corrupt(detail::concat("unsupported version ", header.version,
                               " (this build reads versions ", page_archive_oldest_version, " to ",
                               page_archive_version, ")"));
    }
    if (archive::header_checksum(header) != header.header_checksum) {
        corrupt("header checksum mismatch: the header is corrupt");
    }
    shape = {header.page_count, header.page_bytes, header.tile_bytes, header.tiles_per_page};
    check_header();
}

// Every field against the others and the file: each has one right value, so that a header
// rewritten with a fresh checksum cannot say what the file is not.
void PageArchive::State::check_header() const {
    auto expect = [&](const char* field, std::uint64_t value, std::uint64_t wanted) {
        if (value != wanted) {
            corrupt(detail::concat("inconsistent header: ", field, " is ", value, ", expected ",
                                   wanted));
        }
    };
    expect("header_bytes", header.header_bytes, sizeof(PageArchiveHeader));
    for (std::uint8_t byte : header.reserved) expect("a reserved byte", byte, 0);
    if (const std::string problem = archive::shape_problem(shape); !problem.empty()) {
        corrupt("inconsistent header: " + problem);
    }
    if (const std::string problem =
            archive::parts_problem(shape, header.version, header.parts_per_page);
        !problem.empty()) {
        corrupt("inconsistent header: " + problem);
    }
    if (header.descriptor_bytes > page_archive_max_descriptor_bytes) {
        corrupt(detail::concat("inconsistent header: descriptor_bytes is ", header.descriptor_bytes,
                               ", at most ", page_archive_max_descriptor_bytes));
    }
    const archive::ArchiveOffsets offsets =
        archive::archive_offsets(shape, header.descriptor_bytes, header.version);
    expect("descriptor_offset", header.descriptor_offset, sizeof(PageArchiveHeader));
    expect("index_offset", header.index_offset, offsets.index_offset);
    expect("table_offset", header.table_offset, offsets.table_offset);
    expect("data_offset", header.data_offset, offsets.data_offset);
    if (header.version >= 3)
        expect("table_checksum (no table in version 3)", header.table_checksum, 0);
    if (header.file_bytes % page_archive_alignment != 0 || header.file_bytes < header.data_offset) {
        corrupt(detail::concat("inconsistent header: file_bytes is ", header.file_bytes,
                               ", not a multiple of 4096 at or past data_offset ",
                               header.data_offset));
    }
    if (file_bytes != header.file_bytes) {
        corrupt(detail::concat(file_bytes < header.file_bytes ? "truncated" : "size mismatch",
                               ": the file has ", file_bytes, " bytes, the header says ",
                               header.file_bytes));
    }
}

std::vector<std::byte> PageArchive::State::read_region(std::uint64_t offset, std::uint64_t bytes,
                                                       std::uint64_t checksum,
                                                       const char* what) const {
    std::vector<std::byte> region(bytes);  // inside the file: check_header saw to that
    read(region.data(), bytes, offset, detail::concat("the ", what));
    if (this->checksum(region) != checksum) {
        corrupt(detail::concat(what, " checksum mismatch: the ", what, " is corrupt"));
    }
    return region;
}

// The bytes in [from, to) are zero: padding that no checksum covers.
void PageArchive::State::check_zero(std::uint64_t from, std::uint64_t to, const char* where) const {
    std::byte chunk[4096];
    for (std::uint64_t at = from; at < to; at += sizeof(chunk)) {
        const std::uint64_t size = std::min<std::uint64_t>(sizeof(chunk), to - at);
        read(chunk, size, at, "the padding");
        for (std::uint64_t i = 0; i < size; ++i) {
            if (chunk[i] != std::byte{0}) {
                corrupt(
                    detail::concat("padding corrupt: byte ", at + i, " (", where, ") is not zero"));
            }
        }
    }
}

void PageArchive::State::check_entry(std::uint64_t page, const PageIndexEntry& e) const {
    auto bad = [&](const std::string& problem) {
        corrupt(detail::concat("page ", page, ": bad index entry: ", problem));
    };
    if (e.encoding > std::uint32_t(PageEncoding::zstd) || e.reserved != 0) {
        bad(detail::concat("encoding ", e.encoding, ", reserved ", e.reserved));
    }
    if (e.page_bytes != shape.page_bytes) {
        bad(detail::concat("the page is ", e.page_bytes, " bytes, the header says ",
                           shape.page_bytes));
    }
    const std::uint64_t bound = e.encoding == std::uint32_t(PageEncoding::raw)
                                    ? shape.page_bytes
                                    : archive::zstd_stored_bound(shape, parts());
    if (e.stored_bytes == 0 || e.stored_bytes > bound ||
        (e.encoding == std::uint32_t(PageEncoding::raw) && e.stored_bytes != bound)) {
        bad(detail::concat(e.stored_bytes, " stored bytes (", e.encoding == 0 ? "raw" : "zstd",
                           ": ", e.encoding == 0 ? "exactly " : "1 to ", bound, ")"));
    }
    if (e.offset % page_archive_alignment != 0 || e.offset < header.data_offset ||
        e.offset > file_bytes || e.stored_bytes > file_bytes - e.offset) {
        bad(detail::concat("offset ", e.offset, " + ", e.stored_bytes,
                           " bytes is not a 4 KiB-aligned extent between data_offset ",
                           header.data_offset, " and the end of the file at ", file_bytes));
    }
}

void PageArchive::State::check_overlaps() const {
    std::vector<std::uint64_t> order(shape.page_count);
    std::iota(order.begin(), order.end(), std::uint64_t(0));
    std::sort(order.begin(), order.end(),
              [&](std::uint64_t a, std::uint64_t b) { return index[a].offset < index[b].offset; });
    for (std::size_t i = 1; i < order.size(); ++i) {
        const PageIndexEntry& before = index[order[i - 1]];
        if (before.offset + before.stored_bytes > index[order[i]].offset) {
            corrupt(detail::concat("page ", order[i], ": bad index entry: its stored bytes at ",
                                   index[order[i]].offset, " overlap those of page ",
                                   order[i - 1]));
        }
    }
}

// The entries are checked before the index's checksum, so that a damaged entry is named.
void PageArchive::State::read_index() {
    index.resize(shape.page_count);
    const auto bytes = std::as_writable_bytes(std::span(index));
    read(bytes.data(), bytes.size(), header.index_offset, "the index");
    for (std::uint64_t page = 0; page < shape.page_count; ++page) check_entry(page, index[page]);
    if (checksum(bytes) != header.index_checksum) {
        corrupt("index checksum mismatch: the page index is corrupt");
    }
    check_overlaps();
}

void PageArchive::State::read_table() {
    if (header.version >= 3) return;  // no tile table
    table.resize(shape.page_count * shape.tiles_per_page);
    const auto bytes = std::as_writable_bytes(std::span(table));
    read(bytes.data(), bytes.size(), header.table_offset, "the tile checksum table");
    if (checksum(bytes) != header.table_checksum) {
        corrupt("tile checksum table checksum mismatch: the tile checksum table is corrupt");
    }
}

PageArchive::PageArchive(const std::string& path) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.path = path;
    s.fd = file_io::open_regular_file(path, reader_operation, s.file_bytes);
    s.read_header();
    s.descriptor = s.read_region(s.header.descriptor_offset, s.header.descriptor_bytes,
                                 s.header.descriptor_checksum, "descriptor");
    s.check_zero(s.header.descriptor_offset + s.header.descriptor_bytes, s.header.index_offset,
                 "after the descriptor");
    s.read_index();
    s.read_table();
    s.check_zero(s.header.table_offset + s.table.size() * sizeof(std::uint64_t),
                 s.header.data_offset,
                 s.header.version >= 3 ? "after the index" : "after the tile checksum table");
}

PageArchive::~PageArchive() = default;

const std::string& PageArchive::path() const noexcept { return state_->path; }
int PageArchive::fd() const noexcept { return state_->fd.get(); }
PageArchiveShape PageArchive::shape() const noexcept { return state_->shape; }
std::uint32_t PageArchive::version() const noexcept { return state_->header.version; }
std::uint32_t PageArchive::parts_per_page() const noexcept { return state_->parts(); }
std::span<const std::byte> PageArchive::descriptor() const noexcept { return state_->descriptor; }

void PageArchive::State::check_page_argument(const char* operation, std::uint64_t page,
                                             std::size_t destination_bytes) const {
    if (page >= shape.page_count) {
        throw Error(Errc::out_of_range, operation,
                    detail::concat("page ", page, " is not in the archive: it has ",
                                   shape.page_count, " pages"),
                    detail::concat("path=", path, ", page=", page));
    }
    if (destination_bytes < shape.page_bytes) {
        throw Error(
            Errc::invalid_argument, operation,
            detail::concat("a page is ", shape.page_bytes, " bytes, ", destination_bytes, " given"),
            detail::concat("path=", path, ", page=", page));
    }
}

// The zstd frame of `part` at the start of `rest`: its header says it decodes to the part's bytes.
StoredPart PageArchive::State::frame_at(std::uint64_t page, std::span<const std::byte> rest,
                                        std::uint32_t part) const {
    const std::uint32_t count = parts();
    // Made only for an error: this runs for every part of every page read.
    const auto where = [&] {
        return count == 1 ? detail::concat("page ", page, ": ")
                          : detail::concat("page ", page, ", part ", part, ": ");
    };
    const std::uint64_t part_bytes = shape.page_bytes / count;
    if (rest.empty()) {
        corrupt(detail::concat(where(), "bad zstd frames: the stored bytes end after ", part,
                               " of ", count, " frames"));
    }
    const unsigned long long declared = ZSTD_getFrameContentSize(rest.data(), rest.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN) {
        corrupt(where() + "bad zstd frame: no valid frame header");
    }
    if (declared != part_bytes) {
        corrupt(detail::concat(where(), "the zstd frame decodes to ", declared, " bytes, ",
                               count == 1 ? "the page is " : "a part is ", part_bytes));
    }
    const std::size_t frame = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
    if (ZSTD_isError(frame)) {
        corrupt(detail::concat(where(), "bad zstd frame: it ends past the ", rest.size(),
                               " stored bytes left (", ZSTD_getErrorName(frame), ")"));
    }
    return {rest.first(frame), part, part * part_bytes, part_bytes};
}

// Checked once: the stored bytes' checksum, then each frame's header and extent.
std::vector<StoredPart> PageArchive::State::split(std::uint64_t page,
                                                  std::span<const std::byte> stored) const {
    if (checksum(stored) != index[page].stored_checksum) {
        corrupt(detail::concat("page ", page,
                               ": stored bytes checksum mismatch: the stored page is corrupt"));
    }
    if (index[page].encoding == std::uint32_t(PageEncoding::raw)) {
        return {StoredPart{stored, 0, 0, shape.page_bytes}};
    }
    std::vector<StoredPart> out;
    std::size_t at = 0;
    for (std::uint32_t part = 0; part < parts(); ++part) {
        out.push_back(frame_at(page, stored.subspan(at), part));
        at += out.back().stored.size();
    }
    if (at != stored.size()) {
        corrupt(detail::concat("page ", page, ": bad zstd frame", parts() == 1 ? "" : "s", ": ",
                               parts() == 1 ? "it does" : "they do", " not fill the ",
                               stored.size(), " stored bytes exactly"));
    }
    return out;
}

void PageArchive::State::decode_part(std::uint64_t page, const StoredPart& part,
                                     std::span<std::byte> destination) const {
    const std::span<std::byte> out = destination.subspan(part.offset, part.bytes);
    if (index[page].encoding == std::uint32_t(PageEncoding::raw)) {
        if (part.stored.data() != out.data()) {
            std::memcpy(out.data(), part.stored.data(), part.bytes);
        }
    } else {
        const auto context = contexts.take();
        if (!context.get()) {
            throw Error(Errc::out_of_memory, reader_operation, "cannot make a zstd context",
                        detail::concat("path=", path, ", page=", page));
        }
        const std::size_t size = ZSTD_decompressDCtx(context.get(), out.data(), out.size(),
                                                     part.stored.data(), part.stored.size());
        if (ZSTD_isError(size) || size != part.bytes) {
            corrupt(detail::concat(
                "page ", page, parts() == 1 ? std::string() : detail::concat(", part ", part.index),
                ": bad zstd frame: ",
                ZSTD_isError(size) ? ZSTD_getErrorName(size) : "short output"));
        }
    }
    // Version 2's tile table (its pages are one part). Version 3 on: the stored bytes are checked
    // and zstd decodes them deterministically.
    if (header.version == 2) verify_tiles(page, destination.first(shape.page_bytes));
}

void PageArchive::State::verify_tiles(std::uint64_t page, std::span<const std::byte> bytes) const {
    for (std::uint32_t t = 0; t < shape.tiles_per_page; ++t) {
        const auto tile = bytes.subspan(std::size_t(t) * shape.tile_bytes, shape.tile_bytes);
        if (checksum(tile) != table[page * shape.tiles_per_page + t]) {
            corrupt(detail::concat("page ", page, ", tile ", t,
                                   ": tile checksum mismatch: the data is corrupt"));
        }
    }
}

void PageArchive::State::decode(std::uint64_t page, std::span<const std::byte> stored,
                                std::span<std::byte> destination) const {
    for (const StoredPart& part : split(page, stored)) decode_part(page, part, destination);
}

StoredExtent PageArchive::stored_extent(std::uint64_t page) const {
    const State& s = *state_;
    s.check_page_argument("PageArchive::stored_extent", page, s.shape.page_bytes);
    const PageIndexEntry& e = s.index[page];
    return {e.offset, e.stored_bytes, PageEncoding(e.encoding), e.stored_checksum};
}

void PageArchive::decode_page(std::uint64_t page, std::span<const std::byte> stored,
                              std::span<std::byte> destination) const {
    const State& s = *state_;
    s.check_page_argument("PageArchive::decode_page", page, destination.size());
    if (stored.size() != s.index[page].stored_bytes) {
        throw Error(Errc::invalid_argument, "PageArchive::decode_page",
                    detail::concat("page ", page, " has ", s.index[page].stored_bytes,
                                   " stored bytes, ", stored.size(), " given"),
                    detail::concat("path=", s.path, ", page=", page));
    }
    s.decode(page, stored, destination);
}

std::vector<StoredPart> PageArchive::split_stored(std::uint64_t page,
                                                  std::span<const std::byte> stored) const {
    const State& s = *state_;
    s.check_page_argument("PageArchive::split_stored", page, s.shape.page_bytes);
    if (stored.size() != s.index[page].stored_bytes) {
        throw Error(Errc::invalid_argument, "PageArchive::split_stored",
                    detail::concat("page ", page, " has ", s.index[page].stored_bytes,
                                   " stored bytes, ", stored.size(), " given"),
                    detail::concat("path=", s.path, ", page=", page));
    }
    return s.split(page, stored);
}

void PageArchive::decode_part(std::uint64_t page, const StoredPart& part,
                              std::span<std::byte> destination) const {
    const State& s = *state_;
    s.check_page_argument("PageArchive::decode_part", page, destination.size());
    const std::uint32_t parts =
        s.index[page].encoding == std::uint32_t(PageEncoding::raw) ? 1 : s.parts();
    const bool raw = s.index[page].encoding == std::uint32_t(PageEncoding::raw);
    if (part.index >= parts || part.bytes != s.shape.page_bytes / parts ||
        part.offset != part.index * part.bytes || (raw && part.stored.size() != part.bytes)) {
        throw Error(Errc::invalid_argument, "PageArchive::decode_part",
                    detail::concat("part ", part.index, " at ", part.offset, " of ", part.bytes,
                                   " bytes is not one of the ", parts,
                                   " parts split_stored gives for page ", page),
                    detail::concat("path=", s.path, ", page=", page));
    }
    s.decode_part(page, part, destination);
}

void PageArchive::read_page(std::uint64_t page, std::span<std::byte> destination) const {
    const State& s = *state_;
    s.check_page_argument("PageArchive::read_page", page, destination.size());
    const PageIndexEntry& e = s.index[page];
    if (e.encoding == std::uint32_t(PageEncoding::raw)) {
        s.read(destination.data(), e.stored_bytes, e.offset, detail::concat("page ", page));
        s.decode(page, destination.first(e.stored_bytes), destination);
        return;
    }
    std::vector<std::byte> stored(e.stored_bytes);  // at most ZSTD_compressBound(page_bytes)
    s.read(stored.data(), stored.size(), e.offset, detail::concat("page ", page));
    s.decode(page, stored, destination);
}

void PageArchive::check_all(const std::function<void(double)>& progress) const {
    const State& s = *state_;
    std::vector<std::byte> page(s.shape.page_bytes);
    for (std::uint64_t p = 0; p < s.shape.page_count; ++p) {
        read_page(p, page);
        if (progress) progress(double(p + 1) / double(s.shape.page_count));
    }
    // The padding between the stored pages: in offset order, each gap up to the next page.
    std::vector<StoredExtent> extents;
    for (std::uint64_t p = 0; p < s.shape.page_count; ++p) extents.push_back(stored_extent(p));
    std::sort(extents.begin(), extents.end(),
              [](const StoredExtent& a, const StoredExtent& b) { return a.offset < b.offset; });
    std::uint64_t at = s.header.data_offset;
    for (const StoredExtent& e : extents) {
        s.check_zero(at, e.offset, "between the stored pages");
        at = e.offset + e.bytes;
    }
    s.check_zero(at, s.file_bytes, "after the last stored page");
}

}  // namespace vtpage::vt
