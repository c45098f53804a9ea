#include "streaming/streamer/page_loader.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/test_points.hpp"
#include "streaming/streamer/decode_thread_scheduling.hpp"
#include "streaming/streamer/decoded_page_cache.hpp"
#include "streaming/streamer/part_decode_board.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"

namespace vtpage::vt {

namespace {

using Clock = std::chrono::steady_clock;

// Read buffers are aligned for O_DIRECT and sized for a page's stored bytes (zstd may store a
// page in a little more than page_bytes).
constexpr std::size_t read_buffer_bytes = page_bytes + (64u << 10);

struct FreeDeleter {
    void operator()(std::byte* memory) const noexcept { std::free(memory); }
};
// Shared with the reads into it: a read that outlives the queue's shutdown keeps its buffer.
using ReadBuffer = std::shared_ptr<std::byte>;

ReadBuffer make_read_buffer() {
    void* memory = std::aligned_alloc(file_read_direct_alignment, read_buffer_bytes);
    if (!memory) throw Error(Errc::out_of_memory, "PageLoader", "no memory for a read buffer");
    return ReadBuffer(static_cast<std::byte*>(memory), FreeDeleter{});  // frees it if it throws
}

using streamer_detail::DecodedPageCache;

// A page whose read was submitted, or completed and waiting for a decode thread; or a load of
// rows whose page was found decoded (`cached`: no read, no buffer).
//
// A load of rows decodes the whole page to keep it (`keeping`, when no other thread does) and
// keeps it after its report: from `kept` (decoded into it on the host) or from `keep_from` (the
// decode thread's staging, valid until its next batch).
struct Reading {
    static constexpr std::size_t no_buffer = ~std::size_t(0);
    PageLoad load;
    StoredPageRead stored;
    std::size_t buffer = no_buffer;
    ReadCompletion completion;
    // While tracing: the recorder when its read was submitted, and when (on its clock).
    TraceRecorder* trace = nullptr;
    std::int64_t trace_submitted = 0;
    // How long its decode thread waited for other threads' parts: not decode time of its own.
    double parts_wait_seconds = 0;
    DecodedPageCache::Page cached;
    bool keeping = false;
    DecodedPageCache::Page kept;
    const std::byte* keep_from = nullptr;
};

// The loads' tags are the streamer's pages: trace events carry them as the page.
TraceArgs page_args(const PageLoad& load) { return {.page = load.tag}; }

using streamer_detail::PartClaim;
using streamer_detail::PartDecodeBoard;
using streamer_detail::PartedPage;

// What a decode thread takes next: a page read, or a part of a page another thread decodes.
struct DecodeWork {
    std::optional<Reading> reading;
    std::optional<PartClaim> part;
};

// Copies of one decode thread that were enqueued with on_copies_enqueued and not yet released.
struct PendingCopy {
    std::uint64_t ticket = 0;
    std::uint64_t tag = 0;
};

}  // namespace

struct PageLoader::State {
    explicit State(PageLoaderSettings s)
        : settings(std::move(s)), decoded(settings.decoded_pages_kept), reads(settings.reads) {}

    PageLoaderSettings settings;
    // Pages decoded for rows, for the loads of rows of the same pages that follow.
    DecodedPageCache decoded;

    mutable std::mutex mutex;              // guards what follows
    std::condition_variable decodable_cv;  // the active decode threads': a page to decode
    std::condition_variable unparked_cv;   // the parked ones': the active count rose, or stopping
    std::size_t active = 0;                // decode threads of rank [0, active) take pages
    std::size_t ranks = 0;                 // given to the threads that decode, as they start
    std::condition_variable submitted_cv;  // the reaper's: a read was submitted, or stopping
    std::deque<PageLoad> waiting;          // for a read buffer
    // Loads of rows of pages on their way to the decoded pages (DecodedPageCache::begin_keep):
    // decoded once, for them too.
    std::vector<PageLoad> awaiting_kept;
    std::uint64_t awaited_hits = 0;  // loads of them given the page kept
    // Loads taken by load() and not reported: a load is one read buffer, whatever its copies.
    // Changed under the mutex; room() reads it without: the streamer's workers ask for room
    // while they hold its request book's lock, and a decode thread preempted while it held this
    // mutex (they run at a lowered priority) held up that lock and every frame's requests with
    // it.
    std::atomic<std::size_t> loads_outstanding = 0;
    std::vector<ReadBuffer> buffers;
    std::vector<std::size_t> free_buffers;
    std::unordered_map<std::uint64_t, Reading> submitted;  // by read tag
    std::deque<Reading> decodable;
    PartDecodeBoard parts;                  // pages decoded in parts, with parts not taken
    std::condition_variable parts_done_cv;  // a page's threads': its last part is done
    std::uint64_t next_read_tag = 1;
    std::size_t decoders_without_stream = 0;
    std::condition_variable ready_cv;  // the constructor's: a decode thread is ready
    std::size_t decoders_ready = 0;    // with their stream and staging, or ended
    bool stopping = false;
    bool priority_refused = false;  // a decode thread could not lower its priority (said once)
    PageLoaderStatistics stats;
    // Destroyed first: it waits for the reads in flight, up to its shutdown_timeout. A read
    // that outlasts it holds its buffer (keep_alive) until it ends.
    FileReadQueue reads;

    std::thread reaper;
    std::vector<std::thread> decoders;

    // ---- reads (callers hold mutex) ----
    // Submits reads for waiting pages while buffers are free; the pages that could not even be
    // asked for are returned, to be reported failed outside the lock.
    std::vector<PageLoadResult> submit_waiting_nolock() {
        std::vector<PageLoadResult> failed;
        while (!waiting.empty() && !free_buffers.empty() && !stopping) {
            PageLoad load = std::move(waiting.front());
            waiting.pop_front();
            try {
                submit_nolock(std::move(load));
            } catch (...) {
                --loads_outstanding;
                add_results(load, {.ok = false, .error = std::current_exception()}, failed);
            }
        }
        return failed;
    }

    void submit_nolock(PageLoad load) {
        const std::optional<StoredPageRead> stored =
            load.stored ? load.stored : load.source->stored_read(load.layout_page);
        if (!stored || stored->bytes == 0 || stored->bytes > read_buffer_bytes) {
            throw Error(Errc::corrupt_data, "PageLoader",
                        "the source gives no stored extent that fits a read buffer",
                        detail::concat("source=", load.source->name(), ", page=", load.layout_page,
                                       ", bytes=", stored ? stored->bytes : 0));
        }
        const std::size_t buffer = free_buffers.back();
        if (!buffers[buffer]) buffers[buffer] = make_read_buffer();
        const std::uint64_t tag = next_read_tag++;
        reads.submit({.fd = stored->fd,
                      .offset = stored->offset,
                      .destination = std::span(buffers[buffer].get(), stored->bytes),
                      .tag = tag,
                      .keep_alive = buffers[buffer]});
        free_buffers.pop_back();
        TraceRecorder* trace = trace::active();
        submitted.emplace(
            tag, Reading{std::move(load), *stored, buffer, {}, trace, trace ? trace->now() : 0});
        submitted_cv.notify_one();
        stats.buffers_peak = std::max(stats.buffers_peak, buffers.size() - free_buffers.size());
    }

    // `result` for each of the load's tags.
    static void add_results(const PageLoad& load, PageLoadResult result,
                            std::vector<PageLoadResult>& results) {
        const std::size_t first = results.size();
        result.tag = load.tag;
        results.push_back(std::move(result));
        for (const PageLoad::Copy& copy : load.more) {
            PageLoadResult each = results[first];
            each.tag = copy.tag;
            results.push_back(std::move(each));
        }
    }

    void release_buffer(std::size_t buffer) {
        std::vector<PageLoadResult> failed;
        {
            std::lock_guard lock(mutex);
            free_buffers.push_back(buffer);
            failed = submit_waiting_nolock();
        }
        for (PageLoadResult& result : failed) report(std::move(result));
    }

    // ---- the reaper: completed reads to the decode threads ----
    void reaper_main() {
        trace::name_thread("vtpage read completions");
        while (true) {
            {
                // With no read submitted the queue's wait returns at once (no completion can
                // come): wait for a submission here instead of spinning on a core.
                std::unique_lock lock(mutex);
                submitted_cv.wait(lock, [&] { return stopping || !submitted.empty(); });
                if (stopping && submitted.empty()) return;
            }
            std::vector<ReadCompletion> done = reads.wait(1, std::chrono::milliseconds(20));
            TraceRecorder* trace = done.empty() ? nullptr : trace::active();
            const std::int64_t trace_done = trace ? trace->now() : 0;
            std::lock_guard lock(mutex);
            for (ReadCompletion& completion : done) {
                auto found = submitted.find(completion.tag);
                if (found == submitted.end()) continue;
                // From submission to completion, on the thread that saw it complete.
                if (trace && found->second.trace == trace) {
                    trace->complete("page", "read", found->second.trace_submitted, trace_done,
                                    page_args(found->second.load));
                }
                found->second.completion = std::move(completion);
                decodable.push_back(std::move(found->second));
                submitted.erase(found);
            }
            if (!done.empty()) decodable_cv.notify_all();
            if (stopping) return;
        }
    }

    // ---- decode threads ----
    // The result is handed over: a failure's exception is last released where it is reported,
    // not on this thread after the callback's thread has read it.
    void report(PageLoadResult result) {
        {
            std::lock_guard lock(mutex);
            --stats.outstanding;
            ++(result.ok ? stats.loaded : stats.failed);
        }
        VTPAGE_TEST_POINT("page_loader.report");
        if (!settings.on_loaded) return;
        try {
            settings.on_loaded(std::move(result));
        } catch (const std::exception& error) {
            settings.log.error("page loader: on_loaded threw: ", error.what());
        }
    }

    // Throws the read's failure (cancelled, or an I/O error).
    static void check_read(const Reading& reading) {
        if (reading.completion.status == ReadStatus::ok) return;
        throw Error(Errc::io_error, "PageLoader",
                    reading.completion.status == ReadStatus::cancelled
                        ? std::string("the read was cancelled")
                        : reading.completion.message,
                    detail::concat("source=", reading.load.source->name(),
                                   ", page=", reading.load.layout_page));
    }

    void decode(Reading& reading, DeviceFillContext* context, std::deque<PendingCopy>& copies,
                PageLoadResult& result) {
        std::span<const std::byte> stored;
        if (!reading.cached) {
            check_read(reading);
            stored = std::span(buffers_at(reading.buffer), reading.stored.bytes);
            if (reading.load.rows) {
                reading.keeping =
                    decoded.begin_keep(reading.load.source.get(), reading.load.layout_page);
            }
        }
        if (!context) {
            decode_on_host(reading, stored);
        } else {
            decode_to_device(reading, stored, *context, copies, result);
        }
    }

    // The page's decode, in parts where its source stores it so: the idle active decode threads
    // take parts while this one takes the rest, and it returns once every part is done (a
    // page's decode, not the number of pages, binds how soon a view of few pages looks right).
    void decode_stored(Reading& reading, std::span<const std::byte> stored,
                       std::span<std::byte> destination) {
        const PageLoad& load = reading.load;
        const TileSource& source = *load.source;
        std::vector<StoredPart> split = source.split_stored(load.layout_page, stored);
        // Rows (a level, or tiles of a tile level) need only the parts they read, unless the
        // page is kept decoded for the rows of it that follow.
        if (load.rows && split.size() > 1 && !reading.keeping) {
            std::erase_if(split, [&](const StoredPart& part) {
                return !load.rows->reads(part.offset, part.bytes) &&
                       std::none_of(load.more.begin(), load.more.end(), [&](const auto& copy) {
                           return copy.rows.reads(part.offset, part.bytes);
                       });
            });
        }
        if (split.size() <= 1) {
            if (!split.empty()) source.decode_stored_part(load.layout_page, split[0], destination);
            return;
        }
        PartedPage page{[&](std::size_t part) {
                            source.decode_stored_part(load.layout_page, split[part], destination);
                        },
                        split.size()};
        {
            std::lock_guard lock(mutex);
            parts.post_locked(page);
        }
        // One idle thread for each part past the one this thread takes first.
        for (std::size_t i = 1; i < split.size(); ++i) decodable_cv.notify_one();
        while (true) {
            std::optional<PartClaim> claim;
            {
                std::lock_guard lock(mutex);
                claim = parts.take_own_locked(page);
            }
            if (!claim) break;
            decode_part(*claim);
        }
        const auto waiting = Clock::now();
        {
            VTPAGE_TRACE_SCOPE("page", "parts wait", page_args(load));
            std::unique_lock lock(mutex);
            parts_done_cv.wait(lock, [&] { return PartDecodeBoard::all_done_locked(page); });
        }
        reading.parts_wait_seconds += std::chrono::duration<double>(Clock::now() - waiting).count();
        if (page.error) std::rethrow_exception(page.error);
    }

    // Decodes a part taken from the board and says so, whatever happens (its page's thread
    // waits for it). A helper's part is counted under the same lock that ends it, so whoever
    // sees the page loaded sees the part counted.
    void decode_part(const PartClaim& claim, bool helped = false) {
        VTPAGE_TEST_POINT("page_loader.part");
        const auto start = Clock::now();
        std::exception_ptr error;
        try {
            claim.page->decode(claim.part);
        } catch (...) {
            error = std::current_exception();
        }
        bool last = false;
        {
            std::lock_guard lock(mutex);
            if (helped) {
                ++stats.parts_helped;
                stats.decode_seconds += std::chrono::duration<double>(Clock::now() - start).count();
            }
            last = PartDecodeBoard::finish_locked(claim, std::move(error));
        }
        if (last) parts_done_cv.notify_all();
    }

    // A part of another thread's page, taken while idle.
    void help_decode(const PartClaim& claim) {
        VTPAGE_TRACE_SCOPE("page", "part");
        decode_part(claim, /*helped=*/true);
    }

    // Decoded in place (the page is filled as its decode ends), or whole, then its rows copied.
    void decode_on_host(Reading& reading, std::span<const std::byte> stored) {
        const std::optional<PageRows>& rows = reading.load.rows;
        const TraceArgs args = page_args(reading.load);
        if (!rows) {
            {
                VTPAGE_TRACE_SCOPE("page", "decode", args);
                decode_stored(
                    reading, stored,
                    std::span(reinterpret_cast<std::byte*>(reading.load.destination), page_bytes));
            }
            VTPAGE_TRACE_SCOPE("page", "fill", args);
            return;
        }
        DecodedPageCache::Page whole = reading.cached;
        if (!whole) {
            VTPAGE_TRACE_SCOPE("page", "decode", args);
            auto page = std::make_shared<std::vector<std::byte>>(page_bytes);
            decode_stored(reading, stored, *page);
            if (reading.keeping) reading.kept = page;
            whole = std::move(page);
        }
        VTPAGE_TRACE_SCOPE("page", "fill", args);
        const auto copy_rows = [&](DeviceAddress to_address, const PageRows& copied) {
            auto* destination = reinterpret_cast<std::byte*>(to_address);
            copied.for_each([&](std::uint64_t from, std::uint64_t to, std::uint64_t bytes) {
                std::memcpy(destination + to, whole->data() + from, bytes);
            });
        };
        copy_rows(reading.load.destination, *rows);
        for (const PageLoad::Copy& copy : reading.load.more) copy_rows(copy.destination, copy.rows);
    }

    // Decoded into staging, then copied into the page (or its rows) on the stream.
    void decode_to_device(Reading& reading, std::span<const std::byte> stored,
                          DeviceFillContext& context, std::deque<PendingCopy>& copies,
                          PageLoadResult& result) {
        const std::optional<PageRows>& rows = reading.load.rows;
        const TraceArgs args = page_args(reading.load);
        {
            VTPAGE_TRACE_SCOPE("page", "staging wait", args);
            context.begin_batch();
        }
        std::byte* staging = context.staging(page_bytes);
        if (reading.cached) {
            // The rows from the page kept decoded, through staging (copies read pinned memory).
            const auto stage = [&](const PageRows& copied) {
                copied.for_each([&](std::uint64_t from, std::uint64_t, std::uint64_t bytes) {
                    std::memcpy(staging + from, reading.cached->data() + from, bytes);
                });
            };
            stage(*rows);
            for (const PageLoad::Copy& copy : reading.load.more) stage(copy.rows);
        } else {
            VTPAGE_TRACE_SCOPE("page", "decode", args);
            decode_stored(reading, stored, std::span(staging, page_bytes));
            if (reading.keeping) reading.keep_from = staging;
        }
        // The copy into the page, and the wait for it where it is not fenced.
        VTPAGE_TRACE_SCOPE("page", "fill", args);
        if (!rows) {
            context.copy_to_device(reading.load.destination, staging, page_bytes);
        } else {
            const auto copy_rows = [&](DeviceAddress destination, const PageRows& copied) {
                copied.for_each([&](std::uint64_t from, std::uint64_t to, std::uint64_t bytes) {
                    context.copy_to_device(destination + to, staging + from, bytes);
                });
            };
            copy_rows(reading.load.destination, *rows);
            for (const PageLoad::Copy& copy : reading.load.more) {
                copy_rows(copy.destination, copy.rows);
            }
        }
        end_copies(reading, context, copies, result);
    }

    // Fenced through on_copies_enqueued (released later), or waited for.
    void end_copies(const Reading& reading, DeviceFillContext& context,
                    std::deque<PendingCopy>& copies, PageLoadResult& result) {
        bool fenced = false;
        if (settings.on_copies_enqueued && !reading.load.rows) {
            try {
                result.fence = settings.on_copies_enqueued(context.stream());
                fenced = true;
            } catch (const std::exception& error) {
                settings.log.error("page loader: on_copies_enqueued threw: ", error.what());
            }
        }
        const std::uint64_t ticket = context.end_batch();
        if (fenced) {
            result.release_later = true;
            copies.push_back({ticket, reading.load.tag});
        } else {
            result.fence = 0;
            context.wait(ticket);
        }
    }

    std::byte* buffers_at(std::size_t buffer) {
        std::lock_guard lock(mutex);
        return buffers[buffer].get();
    }

    // Calls on_released for copies that finished (all of them when `wait`).
    void release_copies(DeviceFillContext& context, std::deque<PendingCopy>& copies, bool wait) {
        while (!copies.empty()) {
            const PendingCopy copy = copies.front();
            try {
                if (wait) {
                    context.wait(copy.ticket);
                } else if (!context.finished(copy.ticket)) {
                    return;
                }
            } catch (const std::exception& error) {
                settings.log.error("page loader: a copy failed: ", error.what());
            }
            copies.pop_front();
            if (settings.on_released) settings.on_released(copy.tag);
        }
    }

    // Parked until the decode thread of `rank` is active; false when stopping.
    bool wait_active(std::size_t rank) {
        std::unique_lock lock(mutex);
        unparked_cv.wait(lock, [&] { return stopping || rank < active; });
        return !stopping;
    }

    // A page, or else a part of a page being decoded, for the decode thread of `rank` while it
    // is active (nothing when it was parked meanwhile).
    DecodeWork next_work(std::size_t rank, bool copies_pending) {
        std::unique_lock lock(mutex);
        const auto woken = [&] {
            return stopping || rank >= active || !decodable.empty() || parts.has_parts_locked();
        };
        if (!woken()) {
            VTPAGE_TRACE_SCOPE("page", "idle");
            if (copies_pending) {
                decodable_cv.wait_for(lock, std::chrono::microseconds(500), woken);
            } else {
                decodable_cv.wait(lock, woken);
            }
        }
        if (stopping || rank >= active) return {};
        if (decodable.empty()) return {.part = parts.take_any_locked()};
        DecodeWork work{.reading = std::move(decodable.front())};
        decodable.pop_front();
        return work;
    }

    // Whether every decode thread failed to make its stream, counting the caller's failure.
    bool last_without_stream() {
        std::lock_guard lock(mutex);
        return ++decoders_without_stream == settings.decode_threads;
    }

    // The decode thread's stream; none on the host, or when it cannot be made (`no_stream` says
    // why when no decode thread has one: this one then fails the pages). False: the thread ends
    // (another has a stream and decodes).
    bool make_context(std::unique_ptr<DeviceFillContext>& context, std::string& no_stream) {
        if (!settings.device) return true;
        try {
            context = std::make_unique<DeviceFillContext>(*settings.device);
        } catch (const std::exception& error) {
            settings.log.error("page loader: a decode thread has no stream: ", error.what());
            if (!last_without_stream()) return false;
            no_stream = error.what();
        }
        return true;
    }

    // Decodes the page read, frees its buffer and reports it.
    void decode_one(Reading& reading, DeviceFillContext* context, std::deque<PendingCopy>& copies,
                    const std::string& no_stream) {
        const auto start = Clock::now();
        PageLoadResult result{.tag = reading.load.tag};
        try {
            if (!no_stream.empty()) {
                throw Error(Errc::device_unavailable, "PageLoader",
                            "no decode thread could make its CUDA stream: " + no_stream,
                            detail::concat("source=", reading.load.source->name(),
                                           ", page=", reading.load.layout_page));
            }
            decode(reading, context, copies, result);
            result.ok = true;
        } catch (...) {
            result.error = std::current_exception();
        }
        if (reading.buffer != Reading::no_buffer) release_buffer(reading.buffer);
        // Decode and copies, and the copy kept after the report; not the report's callbacks.
        double seconds = std::chrono::duration<double>(Clock::now() - start).count() -
                         reading.parts_wait_seconds;
        const bool ok = result.ok;
        std::vector<PageLoadResult> results;
        add_results(reading.load, std::move(result), results);
        {
            std::lock_guard lock(mutex);
            --loads_outstanding;
        }
        {
            VTPAGE_TRACE_SCOPE("page", "report", page_args(reading.load));
            for (PageLoadResult& each : results) report(std::move(each));
        }
        if (reading.keeping) {
            const auto keeping = Clock::now();
            finish_keep(reading, ok);
            seconds += std::chrono::duration<double>(Clock::now() - keeping).count();
        }
        std::lock_guard lock(mutex);
        stats.decode_seconds += seconds;
    }

    // Keeps the page decoded, after its own loads are reported (on an H200 the copy out of
    // staging took 1.2 to 1.8 ms, faults of fresh memory included, and was often the last thing
    // a cut's pages waited for), and gives it to the loads that asked for it meanwhile; without
    // it (the decode failed, or no memory) they read it. Takes the loader's mutex, then none.
    void finish_keep(Reading& reading, bool decoded_ok) {
        const PageLoad& load = reading.load;
        DecodedPageCache::Page page = decoded_ok ? kept_bytes(reading) : nullptr;
        if (page) {
            decoded.keep(load.source, load.layout_page, page);
        } else {
            decoded.abandon_keep(load.source.get(), load.layout_page);
        }
        VTPAGE_TEST_POINT("page_loader.kept");
        std::vector<PageLoadResult> failed;
        bool given = false;
        {
            std::lock_guard lock(mutex);
            given = give_kept_nolock(load.source.get(), load.layout_page, page);
            if (!page) failed = submit_waiting_nolock();
        }
        if (given) decodable_cv.notify_all();
        for (PageLoadResult& result : failed) report(std::move(result));
    }

    DecodedPageCache::Page kept_bytes(const Reading& reading) {
        if (reading.kept) return reading.kept;
        if (!reading.keep_from) return nullptr;
        VTPAGE_TRACE_SCOPE("page", "keep", page_args(reading.load));
        try {
            return std::make_shared<const std::vector<std::byte>>(reading.keep_from,
                                                                  reading.keep_from + page_bytes);
        } catch (const std::exception& error) {
            settings.log.error("page loader: keeping a page decoded: ", error.what());
            return nullptr;
        }
    }

    // The loads awaiting the page: to the decode threads with it, or to be read without it.
    // True when any went to the decode threads.
    bool give_kept_nolock(const TileSource* source, std::uint64_t layout_page,
                          const DecodedPageCache::Page& page) {
        bool given = false;
        std::erase_if(awaiting_kept, [&](PageLoad& load) {
            if (load.source.get() != source || load.layout_page != layout_page) return false;
            if (page) {
                decodable.push_back(Reading{.load = std::move(load), .cached = page});
                ++awaited_hits;
                given = true;
            } else {
                waiting.push_back(std::move(load));
            }
            return true;
        });
        return given;
    }

    // The decode thread's staging pinned before its first page (the constructor waits for it):
    // the first pages read do not wait for pinned memory.
    void reserve_staging(DeviceFillContext* context) {
        if (!context) return;
        try {
            context->reserve_staging(page_bytes);
        } catch (const std::exception& error) {
            settings.log.error("page loader: pinning staging memory ahead: ", error.what());
        }
    }

    // Read buffer `index` made and written through before the loader is ready, one per decode
    // thread (the buffers taken first). Made when first needed, a buffer's pages were faulted in
    // by the reads copied into it (up to 146 faults a copy on an H200 machine): the viewer's first
    // burst of copies from the page cache took 0.7 to 3.8 ms each (p50), against 0.25 ms.
    // Called with no lock held: writes the buffer outside the mutex, publishes it under it (only
    // into a slot no load has filled, so never a buffer a read is using).
    void prepare_read_buffer(std::size_t index) {
        if (index >= settings.read_buffers) return;
        try {
            ReadBuffer buffer = make_read_buffer();
            std::memset(buffer.get(), 0, read_buffer_bytes);
            std::lock_guard lock(mutex);
            if (!buffers[index]) buffers[index] = std::move(buffer);
        } catch (const std::exception& error) {
            settings.log.error("page loader: making a read buffer ahead: ", error.what());
        }
    }

    // Ranks go to the threads that decode (with a stream, or the one that fails the pages
    // without), so that the active ones are never threads that ended without a stream.
    std::size_t take_rank() {
        std::lock_guard lock(mutex);
        return ranks++;
    }

    void decoder_ready() {
        {
            std::lock_guard lock(mutex);
            ++decoders_ready;
        }
        ready_cv.notify_all();
    }

    // At the priority asked for before anything else; a thread that cannot lower its own
    // still decodes, and the first says why.
    void lower_priority() {
        const std::string why_not = streamer_detail::lower_this_thread(settings.priority);
        std::lock_guard lock(mutex);
        if (why_not.empty()) {
            if (settings.priority != DecodeThreadPriority::normal) ++stats.lowered_decode_threads;
        } else if (!priority_refused) {
            priority_refused = true;
            settings.log.warning("page loader: decode threads keep their priority: ", why_not);
        }
    }

    void decoder_main(std::size_t index) {
        trace::name_thread("vtpage decode " + std::to_string(index));
        lower_priority();
        std::unique_ptr<DeviceFillContext> context;
        std::deque<PendingCopy> copies;
        std::string no_stream;
        const bool decodes = make_context(context, no_stream);
        // Parked threads pin theirs too, before the loader is ready: pinned when first
        // activated, they stalled every thread's copies while the driver pinned (on an H200
        // with 32 cores, 15 threads activated at once decoded nothing for 120 ms), just when a
        // backlog wanted them.
        const std::size_t rank = decodes ? take_rank() : 0;
        if (decodes) {
            reserve_staging(context.get());
            prepare_read_buffer(index);
        }
        decoder_ready();
        if (!decodes) return;
        while (true) {
            if (context) release_copies(*context, copies, false);
            // Copies still running are released first (they unpin pages), parked or not.
            if (copies.empty() && !wait_active(rank)) break;
            DecodeWork work = next_work(rank, !copies.empty());
            if (work.part) {
                help_decode(*work.part);
                continue;
            }
            if (!work.reading) {
                std::lock_guard lock(mutex);
                if (stopping) break;
                continue;
            }
            decode_one(*work.reading, context.get(), copies, no_stream);
        }
        if (!context) return;
        // Their pages stay pinned until on_released.
        release_copies(*context, copies, true);
        try {
            context->synchronize();
        } catch (const std::exception& error) {
            settings.log.error("page loader: waiting for the copies: ", error.what());
        }
    }
};

PageLoader::PageLoader(PageLoaderSettings settings) {
    if (settings.decode_threads == 0 || settings.read_buffers == 0 ||
        settings.active_decode_threads > settings.decode_threads) {
        throw Error(Errc::invalid_argument, "PageLoader",
                    "decode_threads and read_buffers must be > 0, active_decode_threads at most "
                    "decode_threads",
                    detail::concat("decode_threads=", settings.decode_threads,
                                   ", active_decode_threads=", settings.active_decode_threads,
                                   ", read_buffers=", settings.read_buffers));
    }
    state_ = std::make_unique<State>(std::move(settings));
    State& s = *state_;
    s.active = s.settings.active_decode_threads > 0 ? s.settings.active_decode_threads
                                                    : s.settings.decode_threads;
    s.buffers.resize(s.settings.read_buffers);
    for (std::size_t i = s.settings.read_buffers; i > 0; --i) s.free_buffers.push_back(i - 1);
    try {
        s.reaper = std::thread([&s] { s.reaper_main(); });
        for (std::size_t i = 0; i < s.settings.decode_threads; ++i) {
            s.decoders.emplace_back([&s, i] { s.decoder_main(i); });
        }
        // Until every decode thread has its stream and staging (a bounded wait on our own
        // threads: past it, the pages wait for them instead).
        std::unique_lock lock(s.mutex);
        s.ready_cv.wait_for(lock, std::chrono::seconds(10),
                            [&s] { return s.decoders_ready == s.settings.decode_threads; });
    } catch (...) {
        {
            std::lock_guard lock(s.mutex);
            s.stopping = true;
        }
        s.decodable_cv.notify_all();
        s.unparked_cv.notify_all();
        s.submitted_cv.notify_all();
        if (s.reaper.joinable()) s.reaper.join();
        for (auto& decoder : s.decoders) decoder.join();
        throw;
    }
}

PageLoader::~PageLoader() {
    State& s = *state_;
    {
        std::lock_guard lock(s.mutex);
        s.stopping = true;
        s.waiting.clear();
        s.awaiting_kept.clear();
    }
    s.decodable_cv.notify_all();
    s.unparked_cv.notify_all();
    s.submitted_cv.notify_all();
    for (auto& decoder : s.decoders) decoder.join();
    s.reaper.join();
    // The queue's destructor (with the state) cancels what was not issued and waits for the
    // rest before the read buffers go.
}

std::size_t PageLoader::room() const {
    const std::size_t limit = state_->settings.read_buffers;
    const std::size_t loads = state_->loads_outstanding.load();
    return loads >= limit ? 0 : limit - loads;
}

void PageLoader::load(std::vector<PageLoad> loads) {
    State& s = *state_;
    std::vector<PageLoadResult> failed;
    {
        std::lock_guard lock(s.mutex);
        for (PageLoad& load : loads) {
            s.stats.outstanding += load.tags();
            ++s.loads_outstanding;
            // Rows of a page kept decoded need no read: straight to a decode thread.
            if (load.rows) {
                auto found = s.decoded.find(load.source.get(), load.layout_page);
                if (found.bytes) {
                    s.decodable.push_back(Reading{.load = std::move(load), .cached = found.bytes});
                    s.decodable_cv.notify_one();
                    continue;
                }
                if (found.on_its_way) {
                    s.awaiting_kept.push_back(std::move(load));
                    continue;
                }
            }
            s.waiting.push_back(std::move(load));
        }
        failed = s.submit_waiting_nolock();
    }
    for (PageLoadResult& result : failed) s.report(std::move(result));
}

void PageLoader::set_active_decode_threads(std::size_t count) {
    State& s = *state_;
    if (count == 0 || count > s.settings.decode_threads) {
        throw Error(
            Errc::out_of_range, "PageLoader::set_active_decode_threads",
            detail::concat("active decode threads must be 1 to the ", s.settings.decode_threads,
                           " started"),
            detail::concat("count=", count, ", decode_threads=", s.settings.decode_threads));
    }
    {
        std::lock_guard lock(s.mutex);
        s.active = count;
    }
    s.unparked_cv.notify_all();
    s.decodable_cv.notify_all();  // threads past a lowered count park
}

FileReadBackend PageLoader::backend() const noexcept { return state_->reads.backend(); }

PageLoaderStatistics PageLoader::statistics() const {
    const State& s = *state_;
    PageLoaderStatistics stats;
    {
        std::lock_guard lock(s.mutex);
        stats = s.stats;
        stats.waiting = s.waiting.size();
        stats.buffers_in_use = s.buffers.size() - s.free_buffers.size();
        stats.read_buffers_made = static_cast<std::size_t>(std::count_if(
            s.buffers.begin(), s.buffers.end(), [](const ReadBuffer& b) { return b != nullptr; }));
        stats.decode_queue = s.decodable.size();
        stats.decoded_page_hits = s.decoded.hits() + s.awaited_hits;
        stats.decode_threads = s.settings.decode_threads;
        stats.active_decode_threads = s.active;
    }
    stats.reads = s.reads.statistics();
    return stats;
}

}  // namespace vtpage::vt
