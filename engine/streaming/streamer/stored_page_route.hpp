// The streamer's route for pages stored in files: the page loader (made by the first texture
// whose source stores pages), the batch items it is reading, decoding and copying, and which
// stored pages were read at least once. Items leave through `finish` (the streamer's finisher)
// and copies end through `unpin`, both called on the route's lander thread with no lock of this
// part held, in the order the decode threads reported them.
//
// Why a lander: `finish` takes the request book's lock and waits for its turn to report
// (OrderedDelivery). Called on the decode threads, which run at a lowered priority, one of them
// preempted while its turn was due stalled every other at its own turn (a convoy: traced on
// 16-core H200s, 3 to 16 % of the decode threads' time, and at times 8 of 16 threads at once). The
// decode threads now only queue what they report and go on decoding; the lander, at the priority of
// the thread that made the loader, lands it.
//
// Locks: mutex_ (rank streamer_stored_pages, after the request book's lock). The active decode
// threads wanted are kept under it and passed on to the loader, which keeps its own count under its
// own mutex. landings_mutex_ (rank streamer_landings) guards the lander's queue only and is held
// alone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/ranked_mutex.hpp"
#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/decode_thread_counts.hpp"
#include "streaming/streamer/page_loader.hpp"

namespace vtpage::vt::streamer_detail {

class StoredPageRoute {
public:
    struct Hooks {
        // A loaded item (failed or filled; `fence`, and whether its copy still runs and unpins
        // later through `unpin`).
        std::function<void(BatchItem&, std::uint64_t fence, bool copy_pending)> finish;
        std::function<void(std::span<const PageIndex>)> unpin;
        std::function<void(std::exception_ptr)> record_error;
    };
    StoredPageRoute(Hooks hooks, DecodeThreadCounts decode_threads)
        : hooks_(std::move(hooks)), decode_threads_(decode_threads) {}
    ~StoredPageRoute() { stop(); }
    // Stops the loader (its threads finish what they hold through `finish`), then unpins the
    // pages it dropped (not levels: their hosts stay pinned). Nothing is loaded after.
    void stop();

    // Makes the loader if `source` stores its pages and none exists yet; its errors leave
    // nothing changed. Serialized by the caller (add_texture).
    void start_for(const TileSource& source, const StreamerSettings& settings, bool gpu,
                   int device);
    bool started() const;
    // Read buffers free for new items (unbounded without a loader). Takes no lock: the workers
    // ask while they hold the request book's lock. Not after stop(), which the workers that
    // ask have outlived.
    std::size_t room() const;
    // Hands the items whose pages are stored in files to the loader; returns the others.
    std::vector<BatchItem> load(std::vector<BatchItem> items);
    std::size_t distinct_pages() const;
    std::optional<PageLoaderStatistics> statistics() const;
    std::optional<FileReadBackend> backend() const;
    // The file reads' statistics: the distinct pages and the loader's (if it was started).
    void report(StreamerStatistics::FileReads& reads) const;
    // 1 to the pool, else out_of_range; applied to the loader, or kept for its start.
    void set_active_decode_threads(std::size_t count);
    DecodeThreadLoad decode_load() const;

private:
    // What a decode thread reported: a page loaded (or failed), or a page whose copy ended.
    struct Landing {
        std::optional<PageLoadResult> loaded;
        PageIndex released = 0;
    };
    void start_lander();
    void land_later(Landing landing);
    void lander_main();
    void land(const Landing& landing);
    // Lands what is queued, then ends the lander; returns at once if none runs.
    void stop_lander();
    void on_loaded(const PageLoadResult& result);

    Hooks hooks_;
    // Its active count is guarded by mutex_ (the pool and `automatic` never change).
    DecodeThreadCounts decode_threads_;
    mutable detail::RankedMutex mutex_{detail::LockRank::streamer_stored_pages,
                                       "streamer stored pages"};
    std::unique_ptr<PageLoader> loader_;                // set once; guarded by mutex_
    std::atomic<const PageLoader*> room_of_{nullptr};   // loader_, for room() without the lock
    std::unordered_map<PageIndex, BatchItem> loading_;  // guarded by mutex_
    // Stored pages read, decoded and verified at least once; guarded by mutex_.
    std::unordered_set<StoredPageId, StoredPageIdHash> distinct_;

    mutable detail::RankedMutex landings_mutex_{detail::LockRank::streamer_landings,
                                                "streamer landings"};
    std::condition_variable_any landings_cv_;
    std::deque<Landing> landings_;  // guarded by landings_mutex_, oldest first
    bool lander_stopping_ = false;  // guarded by landings_mutex_
    std::thread lander_;            // started with the loader, by the caller of start_for
};

}  // namespace vtpage::vt::streamer_detail
