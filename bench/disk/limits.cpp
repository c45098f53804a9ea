#include "limits.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "parallel.hpp"
#include "support/report_table.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::bench::disk {

namespace {

constexpr std::uint64_t chunk_bytes = 1u << 20;

struct Chunk {
    std::size_t file = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

std::vector<Chunk> file_chunks(const PageSet& set) {
    std::vector<Chunk> chunks;
    for (std::size_t file = 0; file < set.file_bytes.size(); ++file) {
        for (std::uint64_t offset = 0; offset < set.file_bytes[file]; offset += chunk_bytes) {
            chunks.push_back({file, offset, std::min(chunk_bytes, set.file_bytes[file] - offset)});
        }
    }
    return chunks;
}

void read_chunk(const SetFiles& files, const Chunk& chunk, std::byte* buffer) {
    std::uint64_t done = 0;
    while (done < chunk.bytes) {
        const ssize_t n = ::pread(files.fd(chunk.file), buffer + done, chunk.bytes - done,
                                  off_t(chunk.offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            throw Error(Errc::io_error, "pread", n < 0 ? std::strerror(errno) : "end of file",
                        detail::concat("file=", chunk.file, " offset=", chunk.offset + done));
        }
        done += std::uint64_t(n);
    }
}

// Bytes read by `readers` threads taking chunks in order until `seconds` pass (or, when
// `one_pass`, the chunks run out); and the seconds it took.
std::pair<std::uint64_t, double> read_chunks(const SetFiles& files,
                                             const std::vector<Chunk>& chunks, std::size_t readers,
                                             double seconds, bool one_pass) {
    std::atomic<std::uint64_t> next{0}, bytes{0};
    Stopwatch clock;
    run_parallel(readers, [&](std::size_t, const std::atomic<bool>& stop) {
        std::unique_ptr<std::byte, void (*)(void*)> buffer(
            static_cast<std::byte*>(std::aligned_alloc(4096, chunk_bytes)), std::free);
        for (std::uint64_t i; !stop && (i = next++) < (one_pass ? chunks.size() : UINT64_MAX);) {
            const Chunk& chunk = chunks[i % chunks.size()];
            read_chunk(files, chunk, buffer.get());
            bytes += chunk.bytes;
            if (clock.seconds() >= seconds) break;
        }
    });
    return {bytes.load(), clock.seconds()};
}

void keep_best(Rate& best, Rate candidate) {
    if (candidate.pages_per_s > best.pages_per_s) best = candidate;
}

}  // namespace

Rate measure_read(const PageSet& set, ReadMode mode, std::span<const std::size_t> reader_counts,
                  double seconds) {
    const std::vector<Chunk> chunks = file_chunks(set);
    if (mode == ReadMode::warm) {
        const SetFiles files(set, mode);
        read_chunks(files, chunks, 4, 1e9, true);  // the first pass puts the set in the cache
    }
    Rate best;
    for (std::size_t readers : reader_counts) {
        const SetFiles files(set, mode);  // cold_dropped: dropped again for each count
        const auto [bytes, elapsed] = read_chunks(files, chunks, readers, seconds, is_cold(mode));
        const double bytes_per_s = double(bytes) / elapsed;
        keep_best(best, {bytes_per_s / set.stored_bytes_per_page(), bytes_per_s, readers});
    }
    return best;
}

Rate measure_decode(const PageSet& set, std::size_t threads, double seconds) {
    constexpr std::uint64_t max_bytes = 512u << 20;
    struct Stored {
        const PageRef* page;
        std::vector<std::byte> bytes;
    };
    std::vector<Stored> stored;
    std::uint64_t total = 0;
    const SetFiles files(set, ReadMode::warm);
    for (const PageRef& page : set.pages) {
        if (total + page.extent.bytes > max_bytes && !stored.empty()) break;
        Stored& s = stored.emplace_back(Stored{&page, std::vector<std::byte>(page.extent.bytes)});
        read_chunk(files, {page.archive, page.extent.offset, page.extent.bytes}, s.bytes.data());
        total += page.extent.bytes;
    }
    std::atomic<std::uint64_t> next{0}, done{0};
    const app::CpuSample cpu_before = app::sample_cpu();
    Stopwatch clock;
    run_parallel(threads, [&](std::size_t, const std::atomic<bool>& stop) {
        std::vector<std::byte> page(set.page_bytes);
        while (!stop && clock.seconds() < seconds) {
            const Stored& s = stored[next++ % stored.size()];
            set.archives[s.page->archive]->decode_page(s.page->page, s.bytes, page);
            ++done;
        }
    });
    const double pages_per_s = double(done) / clock.seconds();
    return {pages_per_s, pages_per_s * double(set.page_bytes), threads,
            app::cpu_usage_since(cpu_before)};
}

Rate measure_copy(const DeviceCopySettings& settings, double seconds) {
    constexpr std::size_t sources = 16;  // pinned pages, copied round robin
    Rate best;
    for (std::size_t streams : {1, 2, 4}) {
        DeviceCopySettings copy_settings = settings;
        copy_settings.streams = streams;
        copy_settings.fences = streams;
        DeviceCopier copier(copy_settings);
        if (!copier.on_device()) return {};
        const HostBuffer pinned = copier.allocate_staging(sources * settings.page_bytes);
        std::uint64_t copied = 0;
        Stopwatch clock;
        while (clock.seconds() < seconds) {
            for (std::size_t i = 0; i < 64; ++i, ++copied) {
                copier.copy(copied, copied, pinned.get() + (copied % sources) * settings.page_bytes,
                            0);
            }
            copier.synchronize();
        }
        const double pages_per_s = double(copied) / clock.seconds();
        keep_best(best, {pages_per_s, pages_per_s * double(settings.page_bytes), streams});
    }
    return best;
}

}  // namespace vtpage::bench::disk
