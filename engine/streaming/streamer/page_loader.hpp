// The I/O pipeline under the streamer for pages that sources store in files
// (TileSource::stored_read): the stored bytes are read through one FileReadQueue, many reads in
// flight; decode threads decompress and check each page as soon as its read completes -- into
// pinned staging and then a copy to the page on the thread's CUDA stream, or, on the host
// backend, straight into the page -- and report it. Completion is per page: a slow read never
// holds back pages that are ready.
//
// Active decode threads: of the decode_threads started, active_decode_threads take pages (the
// first ranks, given as the threads start with a stream); the others wait parked on a condition of
// their own (a read's completion wakes only the active ones) until set_active_decode_threads raises
// the count. Every thread pins its staging at start, parked or not (pinning stalls every
// thread's copies, which is not what a backlog that activates threads needs). Lowered,
// the threads past the count finish the page they decode and park. The count is guarded by the
// loader's mutex.
//
// Pages in parts: a page its source stores as several parts (TileSource::split_stored) is decoded
// by its own thread and by the active decode threads that have no page to take, a part each; its
// thread waits for the parts it did not take, and then copies the page. Idle threads help only
// where no read waits for them, so a loader that is busy decodes as before.
//
// Bounded memory: at most `read_buffers` pages are being read or wait for a decode thread (each
// holds a read buffer); each decode thread stages one page at a time (DeviceFillContext's two
// arenas). The caller keeps what exceeds room() in its own queue, where a request can still be
// withdrawn before its read is issued; load() accepts more (they wait here, in order) and never
// refuses.
//
// Callbacks run on decode threads, several at once, with no loader lock held:
//   on_loaded(result)  the page is in place (ok) or failed (error says why). With
//                      on_copies_enqueued the copy was enqueued before the fence the result
//                      carries (release_later), and on_released(tag) follows once it finished.
// Destruction cancels reads not yet issued, waits for the issued ones (a read that outlasts
// reads.shutdown_timeout keeps its buffer until it ends), lets each decode thread finish its page
// (its callbacks run), drops what still waits (no callback: the caller counts those as
// outstanding), and waits for the copies, calling on_released for each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "streaming/streamer/page_rows.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"
#include "vtpage/streaming/streamer/decode_thread_priority.hpp"

namespace vtpage::vt {

struct PageLoad {
    std::shared_ptr<const TileSource> source;
    std::uint64_t layout_page = 0;  // the source's page (its layout: no tile levels)
    DeviceAddress destination = 0;  // a host address without a device
    std::uint64_t tag = 0;          // the caller's, handed back
    // Where the page is stored, when the caller has asked the source already (else the loader
    // asks source->stored_read).
    std::optional<StoredPageRead> stored;
    // Only these rows of the page go to the destination; its copy is waited for (no fence).
    std::optional<PageRows> rows;
    // With rows: more destinations of rows of the same page (other tiles of it), read and
    // decoded once with this one. Each is reported by its own tag, as this one is.
    struct Copy {
        DeviceAddress destination = 0;
        std::uint64_t tag = 0;
        PageRows rows;
    };
    std::vector<Copy> more;
    // How many loads this is: one, and one for each of `more`.
    std::size_t tags() const noexcept { return 1 + more.size(); }
};

struct PageLoadResult {
    std::uint64_t tag = 0;
    bool ok = false;
    std::exception_ptr error;    // why it failed
    std::uint64_t fence = 0;     // on_copies_enqueued's value
    bool release_later = false;  // on_released(tag) follows
};

struct PageLoaderSettings {
    std::size_t decode_threads = 2;         // started
    std::size_t active_decode_threads = 0;  // taking pages at first; 0: all of them
    DecodeThreadPriority priority = DecodeThreadPriority::normal;  // each decode thread's
    std::size_t read_buffers = 32;
    // Whole pages kept decoded for the loads of rows of them that follow (tiles of a tile level
    // asked for over several batches); 0: none, and rows decode only the parts they read.
    std::size_t decoded_pages_kept = 0;
    FileReadQueueSettings reads;
    std::optional<int> device;  // the CUDA device of the pages; none: pages are host memory
    FillsEnqueuedCallback on_copies_enqueued;
    std::function<void(PageLoadResult)> on_loaded;  // handed over: the caller keeps no copy
    std::function<void(std::uint64_t tag)> on_released;
    Log log;
};

struct PageLoaderStatistics {
    std::uint64_t loaded = 0;
    std::uint64_t failed = 0;
    std::size_t outstanding = 0;  // taken by load() and not reported yet (each copy counted)
    std::size_t waiting = 0;      // for a read buffer
    std::size_t buffers_in_use = 0;
    std::size_t buffers_peak = 0;
    // Read buffers allocated: one per decode thread as it starts (written through, so that no
    // read faults on them), then as loads need more, up to read_buffers.
    std::size_t read_buffers_made = 0;
    std::size_t decode_queue = 0;  // read, waiting for a decode thread
    // Summed over decode threads (decode and copy; a page's thread waiting for the parts other
    // threads decode is not counted, their decoding is).
    double decode_seconds = 0;
    std::uint64_t parts_helped = 0;          // parts decoded by a thread not the page's own
    std::uint64_t decoded_page_hits = 0;     // loads of rows copied from a page kept decoded
    std::size_t decode_threads = 0;          // started
    std::size_t active_decode_threads = 0;   // of them, taking pages
    std::size_t lowered_decode_threads = 0;  // of them, at the lowered priority asked for
    FileReadStatistics reads;
};

class PageLoader {
public:
    // invalid_argument for zero decode threads or read buffers, or more active decode threads
    // than decode threads; FileReadQueue's errors. When no decode thread can make its stream on
    // the device, every page fails with device_unavailable.
    explicit PageLoader(PageLoaderSettings settings);
    ~PageLoader();
    PageLoader(const PageLoader&) = delete;
    PageLoader& operator=(const PageLoader&) = delete;

    // Loads load() takes now without making them wait for a read buffer (a load with more
    // copies is one: it reads one page). Takes no lock (it may be a moment old).
    std::size_t room() const;
    void load(std::vector<PageLoad> loads);
    PageLoaderStatistics statistics() const;
    // The decode threads that take pages, 1 to decode_threads (out_of_range otherwise, nothing
    // changed). Never waits for a thread: those past a lowered count park after their page.
    void set_active_decode_threads(std::size_t count);
    FileReadBackend backend() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::vt
