// The bare disk-to-device pipeline: a FileReadQueue reads each page's stored extent into a ring
// of read buffers; CPU workers decode and verify each page (decode_page: the stored bytes'
// checksum, the zstd frame, and in version 2 every tile's checksum) into pinned staging buffers
// (StagingRing) and copy it into the device arena, pages written round robin.
#pragma once

#include <string>

#include "device_copy.hpp"
#include "page_set.hpp"
#include "set_files.hpp"
#include "vtpage/app/cpu_usage.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"

namespace vtpage::bench::disk {

struct PipelineSettings {
    std::size_t depth = 64;          // reads in flight
    std::size_t staging_pages = 32;  // the copier's fences must be at least as many
    std::size_t workers = 4;         // decoding threads (at most staging_pages)
    double seconds = 2;              // warm: pages go in until then; cold: one pass at most
    vt::FileReadBackend read_backend = vt::FileReadBackend::automatic;
    std::size_t page_cache_copiers = 0;  // FileReadQueueSettings::page_cache_copiers
};

struct PipelineResult {
    std::uint64_t pages = 0;       // delivered: read, decoded, verified and copied
    std::uint64_t bytes_read = 0;  // from the files (O_DIRECT: extents rounded up to 4 KiB)
    double seconds = 0;            // from the first read to the last copy done
    std::string read_backend;      // io_uring or threads
    app::CpuUsage cpu;             // the cores of the run

    double pages_per_s() const { return seconds > 0 ? double(pages) / seconds : 0; }
};

// The set's pages in order (repeating, warm) through the pipeline. io_error for a failed read,
// corrupt_data for a page that fails its checks.
PipelineResult run_pipeline(const PageSet& set, ReadMode mode, DeviceCopier& copier,
                            const PipelineSettings& settings);

}  // namespace vtpage::bench::disk
