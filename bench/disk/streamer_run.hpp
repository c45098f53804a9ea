// The same pages through vtpage's Streamer, as an application gets them: each archive of the set
// is a texture, every page is requested in order a window at a time while frames complete, with
// the file read pipeline on (StreamerFileReads: a read queue, decode threads, a copy per page)
// or off (each worker reads, decodes and copies its batch's pages one after another).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "page_set.hpp"
#include "vtpage/app/cpu_usage.hpp"
#include "vtpage/app/thread_cpu.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"
#include "vtpage/streaming/streamer/decode_thread_priority.hpp"

namespace vtpage::bench::disk {

struct StreamerRunSettings {
    bool read_pipeline = true;
    // 0: the streamer's choice, governed as VirtualTextureStreaming governs it (a
    // DecodeThreadGovernor every 10 ms, a feedback's pace, with the loop's frame times).
    std::size_t decode_threads = 0;
    vt::FileReadBackend read_backend = vt::FileReadBackend::automatic;
    std::size_t page_cache_copiers = 0;  // StreamerFileReads::page_cache_copiers
    vt::DecodeThreadPriority decode_priority = vt::DecodeThreadPriority::low;
    // Each pass asks for every page again; past the first, a page is read again where the set
    // holds more than twice the budget (the caller checks: streamer_budget_pages).
    std::size_t passes = 1;
    double seconds = 2;  // at most; stops earlier when every page has been streamed
};

// The budget run_streamer gives its Streamer: 1 GiB.
inline constexpr std::size_t streamer_budget_pages = 512;

struct StreamerRunResult {
    std::uint64_t pages = 0;  // reported ready, the textures' tails not counted
    std::uint64_t failed = 0;
    double seconds = 0;
    // Decode threads started, and how many took pages at the end and at most.
    std::size_t decode_threads = 0, active_decode_threads = 0, most_active_decode_threads = 0;
    app::CpuUsage cpu;  // the cores of the timed part
    // CPU seconds of the timed part by kind of thread (app::thread_kind: "vtp-decode", ...).
    std::map<std::string, double> thread_cpu_seconds;
    double pages_per_s() const { return seconds > 0 ? double(pages) / seconds : 0; }
};

// The set's pages, `passes` times, through a Streamer on `backend` with a 1 GiB budget (warm: the
// caller reads the files once before, so that they come from the page cache).
StreamerRunResult run_streamer(const PageSet& set, Backend& backend,
                               const StreamerRunSettings& settings);

}  // namespace vtpage::bench::disk
