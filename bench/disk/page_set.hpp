// The pages the disk benchmark reads: every page of the page archives in one folder, found
// there or generated (distinct, compressible pages, zstd level 1, checksummed as the archive
// format does).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vtpage/streaming/archive/page_archive.hpp"

namespace vtpage::bench::disk {

// One page of the set: its archive (an index into PageSet::archives) and where it is stored.
struct PageRef {
    std::size_t archive = 0;
    std::uint64_t page = 0;
    vt::StoredExtent extent;
};

struct PageSet {
    std::vector<std::unique_ptr<vt::PageArchive>> archives;
    std::vector<std::uint64_t> file_bytes;  // of each archive's file
    std::vector<PageRef> pages;
    std::uint64_t stored_bytes = 0;  // the stored extents, summed
    std::uint64_t page_bytes = 0;    // uncompressed, the largest of the archives'
    std::uint64_t largest_extent = 0;

    std::uint64_t total_file_bytes() const;
    double stored_bytes_per_page() const { return double(stored_bytes) / double(pages.size()); }
};

// Every regular file of `folder` that starts with the page archive magic, in name order, opened
// and checked. invalid_argument when the folder is missing or holds no archive.
PageSet open_page_set(const std::string& folder);

// Refuses (invalid_argument) when writing `bytes` into `folder` would leave less than
// `keep_free` bytes free on its file system.
void check_free_space(const std::string& folder, std::uint64_t bytes, std::uint64_t keep_free);

// Writes about `bytes` of distinct 2 MiB pages as several archives into `folder` (created when
// missing), on every core, with a progress bar on stderr unless `quiet`.
void generate_page_set(const std::string& folder, std::uint64_t bytes, bool quiet,
                       std::uint32_t parts_per_page);

}  // namespace vtpage::bench::disk
