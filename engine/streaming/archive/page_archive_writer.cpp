// PageArchiveWriter: pages are compressed and written by the threads that add them; only the
// bookkeeping (which pages are in, where the next one goes) is under the lock.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "streaming/archive/file_io.hpp"
#include "streaming/archive/page_archive_format.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"

namespace vtpage::vt {

namespace {

constexpr const char* writer_operation = "PageArchiveWriter";

enum class PageStatus : std::uint8_t { missing, adding, added };

// A page as it is stored: its zstd frames (one per part), or the page itself where that is not
// smaller.
struct EncodedPage {
    std::vector<std::byte> frame;
    PageEncoding encoding = PageEncoding::raw;
};

}  // namespace

struct PageArchiveWriter::State {
    std::string path;
    std::string temporary;
    PageArchiveShape shape;
    std::vector<std::byte> descriptor;
    int level = 3;
    std::uint32_t version = page_archive_version;
    std::uint32_t parts = 1;  // the zstd frames of a page
    archive::ArchiveOffsets offsets;
    UniqueFd fd;
    archive::CompressionContexts contexts;

    std::mutex mutex;
    std::vector<PageStatus> status;
    std::vector<PageIndexEntry> index;
    std::vector<std::uint64_t> table;
    std::uint64_t next_offset = 0;
    bool failed = false;    // a write failed: finish() refuses
    bool finished = false;  // renamed into place
    bool removed = false;   // the partial file is gone (after a failure)

    [[noreturn]] void invalid(const std::string& problem, std::uint64_t page) const {
        throw Error(Errc::invalid_argument, writer_operation, problem,
                    detail::concat("path=", path, ", page=", page));
    }
    // Marks page as being added: refuses what add_page must refuse.
    void claim(std::uint64_t page, std::size_t bytes);
    // Where a page of stored_bytes goes: the next 4 KiB boundary after the pages so far.
    std::uint64_t reserve(std::uint64_t stored_bytes);
    EncodedPage encode(std::span<const std::byte> page);
    void write_tables_and_header();
    // Each tile's checksum for the table: version 2 only (version 3 has none).
    std::vector<std::uint64_t> tile_checksums(std::span<const std::byte> page) const;
    std::uint64_t checksum(std::span<const std::byte> bytes) const {
        return archive_checksum(version, bytes);
    }
    void refuse_if_done(std::uint64_t page) const {
        if (finished) invalid("the archive is finished", page);
        if (failed || removed) invalid("an earlier write failed: the archive is abandoned", page);
    }
    // Removes the partial file's name (other threads may still write to the open file).
    void remove_partial() noexcept;
};

void PageArchiveWriter::State::claim(std::uint64_t page, std::size_t bytes) {
    std::lock_guard lock(mutex);
    refuse_if_done(page);
    if (page >= shape.page_count) {
        throw Error(Errc::invalid_argument, writer_operation,
                    detail::concat("page ", page, " is out of range: the archive has ",
                                   shape.page_count, " pages"),
                    detail::concat("path=", path, ", page=", page));
    }
    if (bytes != shape.page_bytes) {
        invalid(
            detail::concat("page ", page, " is ", bytes, " bytes, pages are ", shape.page_bytes),
            page);
    }
    if (status[page] != PageStatus::missing) {
        invalid(detail::concat("page ", page, " is added twice"), page);
    }
    status[page] = PageStatus::adding;
}

std::uint64_t PageArchiveWriter::State::reserve(std::uint64_t stored_bytes) {
    std::lock_guard lock(mutex);
    const std::uint64_t offset = next_offset;
    next_offset += file_io::align_up(stored_bytes, page_archive_alignment);
    return offset;
}

// Each part is a frame of its own, one after the other (decoded on several threads at once).
EncodedPage PageArchiveWriter::State::encode(std::span<const std::byte> page) {
    EncodedPage out;
    out.frame.resize(archive::zstd_stored_bound(shape, parts));
    const auto context = contexts.take();
    const std::size_t part_bytes = page.size() / parts;
    std::size_t size = 0;
    for (std::uint32_t part = 0; part < parts; ++part) {
        const std::size_t frame =
            context.get()
                ? ZSTD_compressCCtx(context.get(), out.frame.data() + size, out.frame.size() - size,
                                    page.data() + part * part_bytes, part_bytes, level)
                : 0;
        if (!context.get() || ZSTD_isError(frame)) {
            throw Error(Errc::backend_failure, writer_operation, "zstd compression failed",
                        detail::concat("path=", path, ", level=", level), 0,
                        context.get() ? ZSTD_getErrorName(frame) : "ZSTD_createCCtx");
        }
        size += frame;
    }
    if (size < page.size()) {
        out.frame.resize(size);
        out.encoding = PageEncoding::zstd;
    } else {
        out.frame.clear();  // stored raw: the caller writes the page itself
    }
    return out;
}

std::vector<std::uint64_t> PageArchiveWriter::State::tile_checksums(
    std::span<const std::byte> page) const {
    if (version >= 3) return {};
    std::vector<std::uint64_t> sums(shape.tiles_per_page);
    for (std::uint32_t t = 0; t < shape.tiles_per_page; ++t) {
        sums[t] = checksum(page.subspan(std::size_t(t) * shape.tile_bytes, shape.tile_bytes));
    }
    return sums;
}

void PageArchiveWriter::State::remove_partial() noexcept {
    if (!removed) ::unlink(temporary.c_str());
    removed = true;
}

PageArchiveWriter::PageArchiveWriter(const std::string& path, PageArchiveShape shape,
                                     std::span<const std::byte> descriptor,
                                     PageArchiveSettings settings)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.path = path;
    s.temporary = path + ".partial";
    s.shape = shape;
    if (const std::string problem = archive::shape_problem(shape); !problem.empty()) {
        s.invalid(problem, 0);
    }
    if (descriptor.size() > page_archive_max_descriptor_bytes) {
        s.invalid(detail::concat("the descriptor is ", descriptor.size(), " bytes, at most ",
                                 page_archive_max_descriptor_bytes),
                  0);
    }
    if (settings.version < page_archive_oldest_version || settings.version > page_archive_version) {
        s.invalid(detail::concat("version ", settings.version, " is not one written (",
                                 page_archive_oldest_version, " to ", page_archive_version, ")"),
                  0);
    }
    if (settings.zstd_level < page_archive_fastest_zstd_level ||
        settings.zstd_level > page_archive_smallest_zstd_level || settings.zstd_level == 0) {
        s.invalid(detail::concat("zstd_level is ", settings.zstd_level, ", ",
                                 page_archive_fastest_zstd_level, " to -1 or 1 to ",
                                 page_archive_smallest_zstd_level),
                  0);
    }
    if (settings.parts_per_page == 0 || settings.parts_per_page > page_archive_max_parts_per_page) {
        s.invalid(detail::concat("parts_per_page is ", settings.parts_per_page, ", 1 to ",
                                 page_archive_max_parts_per_page),
                  0);
    }
    s.descriptor.assign(descriptor.begin(), descriptor.end());
    s.level = settings.zstd_level;
    s.version = settings.version;
    s.parts = archive::parts_for(shape, s.version, settings.parts_per_page);
    s.offsets = archive::archive_offsets(shape, descriptor.size(), s.version);
    s.next_offset = s.offsets.data_offset;
    s.status.assign(shape.page_count, PageStatus::missing);
    s.index.resize(shape.page_count);
    s.table.resize(archive::table_bytes(shape, s.version) / sizeof(std::uint64_t));
    s.fd = file_io::create_temporary(s.temporary, writer_operation);
}

PageArchiveWriter::~PageArchiveWriter() {
    if (!state_->finished) state_->remove_partial();
    state_->fd.reset();
}

void PageArchiveWriter::add_page(std::uint64_t page, std::span<const std::byte> bytes) {
    State& s = *state_;
    s.claim(page, bytes.size());
    try {
        const EncodedPage encoded = s.encode(bytes);
        const std::span<const std::byte> stored =
            encoded.encoding == PageEncoding::zstd ? std::span(encoded.frame) : bytes;
        const std::vector<std::uint64_t> sums = s.tile_checksums(bytes);
        const std::uint64_t checksum = s.checksum(stored);
        const std::uint64_t offset = s.reserve(stored.size());
        file_io::write_exact(s.fd.get(), stored.data(), stored.size(), offset, writer_operation,
                             s.temporary);
        std::lock_guard lock(s.mutex);
        s.index[page] = {
            offset, stored.size(), checksum, s.shape.page_bytes, std::uint32_t(encoded.encoding),
            0};
        if (!sums.empty()) {
            std::copy(sums.begin(), sums.end(),
                      s.table.begin() + std::ptrdiff_t(page * s.shape.tiles_per_page));
        }
        s.status[page] = PageStatus::added;
    } catch (const Error& error) {
        std::lock_guard lock(s.mutex);
        s.status[page] = PageStatus::missing;
        if (error.code() == Errc::io_error) {
            s.failed = true;
            s.remove_partial();
        }
        throw;
    }
}

void PageArchiveWriter::State::write_tables_and_header() {
    PageArchiveHeader header;
    std::memcpy(header.magic, page_archive_magic, sizeof(header.magic));
    header.version = version;
    header.header_bytes = sizeof(PageArchiveHeader);
    header.page_count = shape.page_count;
    header.page_bytes = shape.page_bytes;
    header.tile_bytes = shape.tile_bytes;
    header.tiles_per_page = shape.tiles_per_page;
    header.descriptor_offset = sizeof(PageArchiveHeader);
    header.descriptor_bytes = descriptor.size();
    header.index_offset = offsets.index_offset;
    header.table_offset = offsets.table_offset;
    header.data_offset = offsets.data_offset;
    header.file_bytes = next_offset;
    const auto index_bytes = std::as_bytes(std::span(index));
    const auto table_bytes = std::as_bytes(std::span(table));
    header.descriptor_checksum = checksum(descriptor);
    header.index_checksum = checksum(index_bytes);
    header.table_checksum = version >= 3 ? 0 : checksum(table_bytes);
    header.parts_per_page = version >= 4 ? parts : 0;
    header.header_checksum = archive::header_checksum(header);
    const int f = fd.get();
    file_io::write_exact(f, descriptor.data(), descriptor.size(), header.descriptor_offset,
                         writer_operation, temporary);
    file_io::write_exact(f, index_bytes.data(), index_bytes.size(), header.index_offset,
                         writer_operation, temporary);
    file_io::write_exact(f, table_bytes.data(), table_bytes.size(), header.table_offset,
                         writer_operation, temporary);
    file_io::write_exact(f, &header, sizeof(header), 0, writer_operation, temporary);
    if (::ftruncate(f, off_t(header.file_bytes)) != 0) {
        throw Error(Errc::io_error, writer_operation,
                    detail::concat("cannot size the file: ", errno_message(errno)),
                    detail::concat("path=", temporary), errno, errno_name(errno));
    }
}

void PageArchiveWriter::finish() {
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    s.refuse_if_done(0);
    const auto missing = std::find_if(s.status.begin(), s.status.end(),
                                      [](PageStatus p) { return p != PageStatus::added; });
    if (missing != s.status.end()) {
        const std::uint64_t page = std::uint64_t(missing - s.status.begin());
        const auto count = std::count_if(s.status.begin(), s.status.end(),
                                         [](PageStatus p) { return p != PageStatus::added; });
        s.invalid(detail::concat("page ", page, " was not added (", count, " of ",
                                 s.shape.page_count, " pages missing)"),
                  page);
    }
    try {
        s.write_tables_and_header();
        file_io::commit_temporary(s.fd, s.temporary, s.path, writer_operation);
        s.finished = true;
    } catch (...) {
        s.failed = true;
        s.remove_partial();
        throw;
    }
}

}  // namespace vtpage::vt
