// What bounds the disk pipeline, each measured alone in the same run: reading the set's files
// (warm and cold, the best over a few reader counts), decoding its stored pages on every core,
// and copying pages from pinned memory to the device.
#pragma once

#include <span>
#include <string>

#include "device_copy.hpp"
#include "page_set.hpp"
#include "set_files.hpp"
#include "vtpage/app/cpu_usage.hpp"

namespace vtpage::bench::disk {

struct Rate {
    double pages_per_s = 0;
    double bytes_per_s = 0;
    std::size_t threads = 0;  // readers, decoders or streams of the best run
    app::CpuUsage cpu;        // the cores of the timed part (measure_decode)
};

// The set's files read sequentially with pread in 1 MiB chunks by each count of readers in
// turn, for about `seconds` each (warm: passes repeat, after an uncounted first pass that fills
// the cache; cold: one pass at most). Pages are the set's stored pages (compressed).
Rate measure_read(const PageSet& set, ReadMode mode, std::span<const std::size_t> reader_counts,
                  double seconds);

// The set's stored pages (up to 512 MiB of them, in memory) decoded and verified by decode_page
// on `threads` threads for about `seconds`.
Rate measure_decode(const PageSet& set, std::size_t threads, double seconds);

// Pages copied from pinned memory into device memory on 1, 2 and 4 streams, the best; zero
// pages/s where the copier has no device.
Rate measure_copy(const DeviceCopySettings& settings, double seconds);

}  // namespace vtpage::bench::disk
