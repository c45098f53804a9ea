// The streamer: worker threads that take page requests, commit the pages through a PageTable
// (budget, pool, eviction), fill them from their textures' tile sources, and report each page
// ready. It owns the page table and the texture set.
//
//   Streamer streamer(backend, {});                        // recommended table settings
//   auto id = streamer.add_texture(std::make_shared<ProceduralSource>(ProceduralSettings{}));
//   FeedbackProcessor feedback(streamer.textures());
//   each frame:
//     auto frame = streamer.begin_frame();
//     streamer.request(feedback.process(entries).requests);
//     for (auto& event : streamer.poll_events()) ...       // or the callbacks below
//     ... render frame `frame`; when the device has finished it:
//     streamer.complete_frame(frame);
//
// Events, in the order they happen for any page and any physical slot:
//   committed  the page table gave the page a physical page (its bytes are not there yet);
//   ready      the page's fill is complete (or, with on_fills_enqueued, enqueued before the
//              fence value it carries): only now may an indirection table point at it;
//   evicted    the page lost its physical page, which may be reused at once.
// A page is never evicted between committed and ready (it is pinned while it fills), and only
// when every frame that used it (requested it or had it committed) is complete. The mip tail
// page of each texture is committed, filled and reported ready by add_texture, and stays pinned.
//
// Packed tails (StreamerSettings::pack_tails, the default): a tail takes a few tiles (RGBA8
// 2^15: 7 tiles, 448 KiB; BC1 2^14: 8 tiles, 256 KiB), not a page, and thousands of textures
// would pin thousands of pages. The tails are therefore packed: a texture's tail page is
// committed only when no earlier tail page has room left, and otherwise its tiles are written
// after the tiles already there. Its events then name the tail page of its own texture
// (`page`) with where its bytes are (`table_page`, `offset`, `bytes`): an indirection entry for
// `page` points `offset` bytes into the physical page, and the shaders, which add the tile's
// place to the entry, need nothing else.
//
// Packed coarse levels (StreamerSettings::pack_levels, the default): a level that fits one page
// with room to spare (RGBA8 2^15: mips 7 and 8, 3 x 3 and 2 x 2 tiles of a page's 8 x 4) is
// placed in a page shared with levels of the same shape of other textures, at a place that keeps
// its tiles where the shaders look for them. Its events are those of a packed tail (`page`,
// `table_page`, `offset`, `bytes`), filled before they are reported (fence 0). Unlike tails
// these levels are requested and evicted: on their own, least recently used first, never while
// a frame that used them is incomplete, and their place is given to another level only once
// the frames begun before the eviction was reported are complete. The shared pages are the
// streamer's own: pinned, without events of their own, and named by pages that the streamer
// adds past the end of table.region_size (which stays the texture set's). They take at most
// packed_level_pages of the budget.
//
// Data is reached, as PageReady::data says, through the physical page's window (the recommended
// table settings: map_into_region = false, pool.map_windows = true, so that recycling a page
// makes no VMM call) or at the page's place in the region (map_into_region = true). The slot
// (PooledPage::slot) indexes per-physical-page tables such as Vulkan imports.
//
// Pages that sources store in files (baked archives) take another road once committed: many
// reads in flight through one read queue, decoding on their own threads, each page reported
// ready on its own as soon as it is in place (StreamerFileReads).
//
// GPU ordering: on the CUDA backend a batch's fills run on the worker's CUDA stream (a kernel
// for procedural sources, pinned staging + cudaMemcpyAsync for files), on the device and
// primary context of the CUDA backend. By default the streamer waits for the stream before it
// reports the batch ready. With on_fills_enqueued, it calls that hook with the stream right after
// the batch's fills are enqueued (signal a timeline semaphore there, for example) and reports
// ready at once, carrying the value the hook returned; the pages stay pinned until the fills
// have finished.
//
// Errors in workers (a source that fails to read, a backend failure) do not stop the streamer:
// the pages concerned are not reported ready, and the error is kept for take_error() /
// rethrow_error() and passed to on_error. Requests beyond max_pending are dropped (counted).
//
// Use the page table through the streamer: begin_frame / complete_frame here (or on the table:
// workers then notice completed frames within a few milliseconds), and none of the table's
// mutating members. All members are thread-safe. Destruction stops the workers (a batch in
// flight is finished), waits for outstanding fills, marks every frame complete and releases
// every page: destroy the streamer only when the device no longer reads its pages. No events
// are delivered once destruction has begun.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"
#include "vtpage/streaming/layout/pinned_pages.hpp"
#include "vtpage/streaming/sources/page_request.hpp"
#include "vtpage/streaming/sources/texture_set.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"
#include "vtpage/streaming/streamer/decode_thread_priority.hpp"

namespace vtpage::vt {

// A page and where it lives; what every event carries.
struct StreamedPage {
    PageIndex page = 0;  // global page (texture base + layout page)
    TextureId texture = 0;
    std::uint64_t layout_page = 0;  // page within the texture
    std::uint32_t mip = 0;          // the tail page reports its first mip (tail_first_mip)
    PooledPage physical;            // .slot, .handle, .window
    std::uint64_t generation = 0;   // PageMapping::generation of the commit
    DeviceAddress data = 0;         // where the page's bytes are (`bytes` of them)
    std::uint64_t fence = 0;        // ready: on_fills_enqueued's value; 0 when waited for
    // The page table's page that holds the bytes: `page` itself, except for a packed tail, which
    // lives `offset` bytes into another texture's tail page (see pack_tails above).
    PageIndex table_page = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = page_bytes;
    bool packed() const noexcept { return table_page != page; }
};

enum class StreamerEventKind : std::uint8_t { committed, ready, evicted };

struct StreamerEvent {
    StreamerEventKind kind = StreamerEventKind::ready;
    StreamedPage page;
};

using StreamedPagesCallback = std::function<void(std::span<const StreamedPage>)>;

// map_into_region = false, pool.map_windows = true, a 16 TiB region, a 1 GiB budget, 64 pages
// evicted ahead while streaming at a full budget (PageTableSettings::evict_ahead_pages).
PageTableSettings recommended_table_settings();

// How pages stored in files (TileSource::stored_read, baked archives) are read: through one
// read queue with many reads in flight, decoded on their own threads, each page reported ready
// as soon as it is in place. The workers only commit them; a page waits in the priority queue
// (where it can still be withdrawn) until a read buffer is free.
struct StreamerFileReads {
    bool enabled = true;  // false: the workers fill them with the sources' own fills
    // More decode threads decode faster but slow the app's frames (on the H100 machine 16 threads
    // made the viewer's render call p99 about 5 ms over the instanced set, 8 threads 2.5 ms), and
    // past some count decode no faster (docs/streaming.md). 0: automatic: a thread is started
    // for each CPU this process may use (affinity and cgroup quota) but one, at most one per read
    // buffer; at the normal priority half the CPUs (at least 2) take pages at first, the others
    // wait parked, and set_active_decode_threads changes how many take pages
    // (VirtualTextureStreaming runs a DecodeThreadGovernor that does it from the frame times and
    // the pages decoded per second); at a lowered priority all of them take pages at first, and
    // the governor removes threads while the frames are over their target. N > 0: N threads,
    // all taking pages.
    std::size_t decode_threads = 0;
    DecodeThreadPriority decode_priority = DecodeThreadPriority::low;
    std::size_t read_buffers = 64;  // pages read or waiting to be decoded at most
    std::size_t depth = 32;         // reads in flight at most
    FileReadBackend backend = FileReadBackend::automatic;
    // io_uring: threads copying reads the page cache holds (FileReadQueueSettings); 0: automatic.
    std::size_t page_cache_copiers = 0;
    // Pages kept decoded in host memory (2 MiB each) for the tiles of them asked for later: the
    // tiles of a tile level (TileLevelSource) that a view asks for over many frames then read
    // and decode their stored page once while it is kept. 0: none (a tile decodes only the part
    // of its page that holds it). At most max_decoded_pages_kept.
    std::size_t decoded_pages_kept = 16;
    static constexpr std::size_t max_decoded_pages_kept = 4096;
    FileLayer* layer = nullptr;  // tests: a fault-injecting layer
};

struct StreamerSettings {
    // Its on_committed / on_evicted, if set, are called too (before the streamer's own).
    PageTableSettings table = recommended_table_settings();
    std::size_t worker_threads = 2;
    std::size_t batch_pages = 64;     // pages committed and filled together
    std::size_t max_pending = 65536;  // requests waiting beyond this are dropped
    // The view keeps the pages it asked for in its last recent_frames frames: a request takes
    // the room of pages wanted before them only (or of finer levels than its own), so that a
    // view needing more pages than the budget holds keeps what it samples instead of trading
    // its pages for each other, and its feedback, which need not name every page it samples
    // every frame, does not lose them between two frames. 1 to 1024.
    FrameId recent_frames = 8;
    // A page asked for again within 8 frames of its eviction (a refault) while the view needs
    // more pages than the budget holds is held: not read again for refault_hold_frames frames,
    // or until the view fits the budget, and the part of the view it covers shows the finest
    // coarser level resident. A view over budget then stops chasing the pages it traded away
    // instead of reading them again and again. 0: never held; at most 65536.
    FrameId refault_hold_frames = 64;
    StreamerFileReads file_reads;
    // Pack the mip tails of many textures into shared pages (see above); false: a page each.
    bool pack_tails = true;
    // Pack coarse levels of many textures into shared pages (see above); false: a page each.
    bool pack_levels = true;
    // Pages of the budget that may hold packed coarse levels and the tiles of tile levels
    // (TileLevelSource); 0: a quarter of the budget, three quarters once a texture has tile
    // levels.
    std::size_t packed_level_pages = 0;
    // Keep events for poll_events() (besides calling the callbacks). Poll regularly when set.
    bool queue_events = false;
    // Called one at a time, in order, on the thread that made the change (a worker, or the
    // caller of add_texture), with no streamer lock held: they may call const members.
    StreamedPagesCallback on_committed;
    StreamedPagesCallback on_ready;
    StreamedPagesCallback on_evicted;
    FillsEnqueuedCallback on_fills_enqueued;  // CUDA only; empty: wait for the fills
    std::function<void(const Error&)> on_error;
    Log log;
};

struct StreamRequestResult {
    std::size_t ready = 0;           // resident and filled (touched for this frame)
    std::size_t queued = 0;          // newly pending
    std::size_t already_queued = 0;  // pending or being filled
    std::size_t dropped = 0;         // beyond max_pending
};

struct StreamerStatistics {
    std::size_t textures = 0;
    std::size_t pending = 0;
    std::size_t in_flight = 0;               // being committed or filled
    std::size_t ready_pages = 0;             // resident and filled, tails included
    std::size_t tail_pages = 0;              // pages holding mip tails (pinned)
    std::size_t packed_tails = 0;            // tails written into another texture's tail page
    std::size_t level_pages = 0;             // pages holding packed coarse levels (pinned)
    std::size_t packed_levels = 0;           // coarse levels resident in them
    std::uint64_t evicted_levels = 0;        // packed coarse levels evicted to make room
    std::uint64_t released_level_pages = 0;  // pages of packed levels the table evicted
    std::uint64_t requests = 0;
    std::uint64_t pages_filled = 0;  // reported ready
    std::uint64_t bytes_filled = 0;
    std::uint64_t batches = 0;
    std::uint64_t budget_stalls = 0;  // times nothing fitted (pinned or fenced pages)
    std::uint64_t dropped_requests = 0;
    // Requests dropped because their page (or packed level) fits only by evicting pages (or
    // levels) wanted in the frame they were asked in or later: the view needs more than the
    // budget holds, and keeps what it samples rather than trading it for ever. Asked again, they
    // compete again; superseded requests a frame tell how far over budget the view is.
    std::uint64_t superseded_requests = 0;
    // Pages asked for again within recent_frames frames of their eviction: a view trading its
    // own pages for each other (thrashing). Few, with recent_frames above 1.
    std::uint64_t refaulted_pages = 0;
    // Of those, the pages held while the view was over budget (refault_hold_frames), and the
    // requests for held pages that were not queued.
    std::uint64_t held_pages = 0;
    std::uint64_t held_requests = 0;
    // Pages the view asked for in its last recent_frames frames (packed levels and tails left
    // out), and how many of them the budget cannot hold beside the pinned pages: the view is
    // over budget by that many. The streamer then keeps the finest levels that fit where they
    // are and the rest of the view shows coarser levels, instead of evicting and reading pages
    // again for ever; it is back to 0 once the view shrinks or the budget grows.
    std::size_t recent_pages = 0;
    std::size_t over_budget_pages = 0;
    std::uint64_t cancelled_requests = 0;  // pending requests removed by cancel / clear_pending
    std::uint64_t failed_pages = 0;        // fills or commits that failed
    std::uint64_t errors = 0;
    double commit_seconds = 0;  // summed over workers
    double fill_seconds = 0;
    // The file read pipeline (StreamerFileReads); zero where no page was stored in a file.
    struct FileReads {
        std::uint64_t loaded = 0;
        // Stored pages loaded at least once (instances of one file share theirs), each verified
        // by its checksum as it was decoded.
        std::uint64_t distinct_pages = 0;
        std::uint64_t failed = 0;
        std::size_t outstanding = 0;     // committed and not reported yet
        std::size_t buffers_in_use = 0;  // read buffers (of read_buffers)
        std::size_t buffers_peak = 0;
        std::size_t decode_queue = 0;  // read, waiting for a decode thread
        std::size_t reads_in_flight = 0;
        std::size_t reads_peak_in_flight = 0;
        // Read attempts copied from the page cache at once (io_uring's, FileReadStatistics).
        std::uint64_t page_cache_attempts = 0;
        std::uint64_t bytes_read = 0;  // stored bytes
        double decode_seconds = 0;     // summed over decode threads
        // Parts of pages stored in parts (format version 4) that an idle decode thread decoded
        // beside the page's own thread.
        std::uint64_t decode_parts_helped = 0;
        // Loads of tiles (or packed levels) copied from a page kept decoded, with no read
        // (StreamerFileReads::decoded_pages_kept).
        std::uint64_t decoded_page_hits = 0;
        std::size_t decode_threads = 0;         // started (StreamerFileReads::decode_threads)
        std::size_t active_decode_threads = 0;  // of them, taking pages (the others parked)
        // Of them, at the lowered StreamerFileReads::decode_priority (the others could not lower
        // theirs: a warning in the log says why).
        std::size_t lowered_decode_threads = 0;
        std::string backend;  // io_uring or threads
    } file_reads;
    PageTableStatistics table;
};

// The file read pipeline's decode threads (Streamer::decode_threads): cheaper than
// statistics(), for every frame. The counts hold before the pipeline starts too (it starts with
// the first texture whose pages are stored in files).
struct DecodeThreadLoad {
    std::size_t pool = 0;             // decode threads started, or to be started
    std::size_t active = 0;           // of them, taking pages
    bool automatic = false;           // StreamerFileReads::decode_threads was 0
    std::size_t waiting_pages = 0;    // read and waiting for a decode thread, now
    std::uint64_t decoded_pages = 0;  // loaded or failed, since the pipeline started
    double busy_seconds = 0;          // decoding and copying, summed over the threads, since then
};

// How far the pages the view asked for in its last recent_frames frames exceed what the
// budget holds beside the pinned pages (StreamerStatistics::recent_pages, over_budget_pages).
struct BudgetDemand {
    std::size_t recent_pages = 0;
    std::size_t resident_recent_pages = 0;  // ... of which are ready: the view samples them
    std::size_t free_pages = 0;  // the budget less the pinned tails and packed-level pages
    std::size_t over_budget_pages = 0;
    bool over_budget() const noexcept { return over_budget_pages > 0; }
    // The share of the free pages that hold pages the view asked for (1 when none are free).
    double sampled_share() const noexcept {
        return free_pages ? double(resident_recent_pages) / double(free_pages) : 1.0;
    }
};

class Streamer {
public:
    // invalid_argument when the table would have no way to reach page data (neither
    // map_into_region nor pool.map_windows) or for zero workers or batch pages.
    Streamer(Backend& backend, StreamerSettings settings = {});
    ~Streamer();
    Streamer(const Streamer&) = delete;
    Streamer& operator=(const Streamer&) = delete;

    PageTable& page_table() noexcept;
    const TextureSet& textures() const noexcept;

    // Adds a texture, commits its tail page pinned (or packs the tail into one already there)
    // and fills it; the tail's committed and ready events are delivered before this returns.
    // budget_exhausted, before anything changes, when the textures would then pin more pages
    // than the budget holds (pinned_pages.hpp: their tails and the least of their packed
    // levels), with both numbers. Errors
    // of TextureSet::add, of the commit (budget_exhausted) and of the fill are thrown; when the
    // commit or the fill failed the texture stays in the set (its pages can be requested) but its
    // tail is not resident. The first source that stores its pages in files starts the file read
    // pipeline (StreamerFileReads); its errors (not_supported for an io_uring that cannot work) are
    // thrown before anything changes.
    TextureId add_texture(const std::shared_ptr<const TileSource>& source);

    // Asks for pages. Ready pages are touched (kept from eviction until this frame completes);
    // the others are queued by priority (coarse first, then count), or their count raised.
    // out_of_range for a page that belongs to no texture (nothing is queued then).
    StreamRequestResult request(std::span<const PageRequest> requests);
    // The same with count 1 for each page.
    StreamRequestResult request(std::span<const PageIndex> pages);
    // Drops pending requests (pages being filled are not stopped); those that were pending are
    // counted in StreamerStatistics::cancelled_requests.
    void cancel(std::span<const PageIndex> pages);
    void clear_pending();

    FrameId begin_frame();
    void complete_frame(FrameId frame);

    // The page table's budget, with the pool's release threshold following it
    // (PageTable::set_budget with release_idle), so that pages given back leave the device. A
    // raised budget lets stalled workers try again at once. A lowered one gives back the pages
    // of packed levels beyond its share: their levels are evicted as their frames complete (here,
    // in evict_over_budget, complete_frame and the workers), then the pages leave the table.
    // out_of_range beyond pool.window_pages, or below the pages the textures pin
    // (pinned_pages()); nothing changes then.
    void set_budget(std::size_t bytes);
    // What the textures added so far pin at the current budget (pinned_pages.hpp).
    PinnedPages pinned_pages() const;
    // How many decode threads take pages, 1 to the pool (DecodeThreadLoad::pool); the others
    // wait parked, and those past a lowered count finish their page first. out_of_range
    // otherwise (nothing changes). Any thread; kept for a pipeline not started yet.
    void set_active_decode_threads(std::size_t count);
    DecodeThreadLoad decode_threads() const;
    // Evicts down to a lowered budget, at most max_pages pages a call
    // (PageTable::evict_over_budget): pages being filled and pages of frames that are not
    // complete stay. The evicted events are delivered as the workers' are, on the calling
    // thread. Returns how many pages left.
    std::size_t evict_over_budget(std::size_t max_pages);

    bool is_ready(PageIndex page) const;
    std::optional<StreamedPage> ready_page(PageIndex page) const;
    // Every ready page, packed tails and levels included, in no order (a copy, taken at once).
    std::vector<StreamedPage> ready_pages() const;
    // Pending, or being committed and filled.
    bool is_queued(PageIndex page) const;
    std::size_t pending_count() const;

    // Events since the last call, in order (only with queue_events).
    std::vector<StreamerEvent> poll_events();
    // Waits until nothing is pending or being filled and every ready event has been delivered;
    // false on timeout (for example when the budget is full of pages fenced by frames that
    // never complete).
    bool wait_idle(std::chrono::milliseconds timeout);
    // The same, giving up only once no page was reported ready or failed for `stall`: a
    // machine that is slow (sanitizers, a busy CPU) still gets there, a stuck streamer does not.
    bool wait_idle_while_progressing(std::chrono::milliseconds stall);

    // The oldest error a worker met that was not taken yet (null when none).
    std::exception_ptr take_error();
    // Throws take_error() if there is one.
    void rethrow_error();

    // The view's recent pages against the budget: cheaper than statistics(), for every frame.
    BudgetDemand budget_demand() const;
    StreamerStatistics statistics() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::vt
