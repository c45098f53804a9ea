#include "streaming/archive/page_archive_format.hpp"

#include <algorithm>

#include "streaming/archive/file_io.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"

namespace vtpage::vt::archive {

std::uint64_t table_bytes(const PageArchiveShape& shape, std::uint32_t version) {
    if (version >= 3) return 0;
    return shape.page_count * shape.tiles_per_page * sizeof(std::uint64_t);
}

ArchiveOffsets archive_offsets(const PageArchiveShape& shape, std::uint64_t descriptor_bytes,
                               std::uint32_t version) {
    ArchiveOffsets offsets;
    offsets.index_offset = file_io::align_up(sizeof(PageArchiveHeader) + descriptor_bytes, 8);
    offsets.table_offset = offsets.index_offset + shape.page_count * sizeof(PageIndexEntry);
    offsets.data_offset = file_io::align_up(offsets.table_offset + table_bytes(shape, version),
                                            page_archive_alignment);
    return offsets;
}

std::string shape_problem(const PageArchiveShape& shape) {
    if (shape.page_count == 0 || shape.tile_bytes == 0 || shape.tiles_per_page == 0) {
        return detail::concat("an empty shape: ", shape.page_count, " pages of ",
                              shape.tiles_per_page, " tiles of ", shape.tile_bytes, " bytes");
    }
    if (std::uint64_t(shape.tile_bytes) * shape.tiles_per_page != shape.page_bytes) {
        return detail::concat("page_bytes is ", shape.page_bytes, ", not tile_bytes x ",
                              "tiles_per_page = ", shape.tile_bytes, " x ", shape.tiles_per_page);
    }
    if (shape.page_bytes > page_archive_max_page_bytes) {
        return detail::concat("page_bytes is ", shape.page_bytes, ", at most ",
                              page_archive_max_page_bytes);
    }
    if (shape.page_count > page_archive_max_tiles / shape.tiles_per_page) {
        return detail::concat(shape.page_count, " pages of ", shape.tiles_per_page,
                              " tiles: more than ", page_archive_max_tiles, " tiles");
    }
    return {};
}

std::uint32_t parts_for(const PageArchiveShape& shape, std::uint32_t version,
                        std::uint32_t wanted) {
    if (version < 4) return 1;
    std::uint32_t parts = std::min(wanted, shape.tiles_per_page);
    while (parts > 1 && shape.tiles_per_page % parts != 0) --parts;
    return std::max<std::uint32_t>(parts, 1);
}

std::string parts_problem(const PageArchiveShape& shape, std::uint32_t version,
                          std::uint32_t parts_per_page) {
    if (version < 4) {
        if (parts_per_page == 0) return {};
        return detail::concat("parts_per_page is ", parts_per_page, ", zero before version 4");
    }
    if (parts_per_page == 0 || parts_per_page > page_archive_max_parts_per_page ||
        shape.tiles_per_page % parts_per_page != 0) {
        return detail::concat("parts_per_page is ", parts_per_page, ": 1 to ",
                              page_archive_max_parts_per_page, " dividing the ",
                              shape.tiles_per_page, " tiles of a page");
    }
    return {};
}

std::uint64_t zstd_stored_bound(const PageArchiveShape& shape, std::uint32_t parts) {
    return std::uint64_t(parts) * ZSTD_compressBound(shape.page_bytes / parts);
}

std::uint64_t header_checksum(PageArchiveHeader header) {
    header.header_checksum = 0;
    return archive_checksum(header.version, std::as_bytes(std::span(&header, 1)));
}

}  // namespace vtpage::vt::archive
