// The residency manager: which virtual pages of a huge region are backed by physical memory,
// under a budget, with eviction, pinning and frame fences.
//
//   PageTable table(backend, {.region_size = 64_TiB, .budget_bytes = 1_GiB});
//   table.request(pages_this_frame);       // resident ones are touched, the rest queued
//   table.commit_queued(64);               // on a worker: commit up to 64, evicting as needed
//   ...                                    // render frame N with what is resident
//   table.complete_frame(n);               // the GPU is done with frame N
//
// Frame fences: a page used (requested or committed) in frame N is not evicted before the app
// reports frame N complete, because VMM calls do not wait for GPU work in flight. Apps that do
// not use frames never call begin_frame(): everything is then in frame 0, which counts as
// complete, and any unpinned page can be evicted.
//
// Deferred reuse: a frame in flight can sample a page it never asked for (feedback is sparse),
// so an evicted page's physical page is not given to another page at once. It is held back
// (deferred_pages in the statistics) until every frame begun when its eviction was reported has
// completed, then reused by a later commit. Held-back pages count against the budget, and so do
// evicted pages still being unmapped or on their way to the pool, so memory never exceeds it;
// the held-back pages' number is bounded by the evictions of the frames in flight. A commit that
// finds room only in held-back pages or pages on their way out waits (budget_exhausted, or stays
// queued) until those frames complete or those pages arrive; it takes no victims for that room.
//
// Callbacks report commits and evictions in batches, in the order they happen, so that higher
// layers (the indirection table, IPC peers) stay current: an eviction is reported before its
// physical page can be committed anywhere else, and generations grow in callback order. They run
// one at a time on the thread that made the change, with no lock held: they may call the table's
// queries (lookup, statistics...) but not its mutating members.
//
// All members are thread-safe. Backend calls run outside the table's lock, so requests from
// other threads are not held up by a commit in progress.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/core/eviction_policy.hpp"
#include "vtpage/core/latency_histogram.hpp"
#include "vtpage/core/page_pool.hpp"
#include "vtpage/core/virtual_region.hpp"

namespace vtpage {

using FrameId = std::uint64_t;

// A virtual page and the physical page behind it.
struct PageMapping {
    PageIndex page = 0;
    PooledPage physical;
    // Increases with every commit in the table: tells a recommitted page from its earlier self.
    std::uint64_t generation = 0;
};

using PageMappingCallback = std::function<void(std::span<const PageMapping>)>;

// The first frame whose wants a commit for pages asked for in `asked_in` leaves alone, when the
// pages wanted in the `recent_frames` frames up to it are kept (CommitOptions); 0 for 0: no rule.
constexpr FrameId first_kept_frame(FrameId asked_in, FrameId recent_frames) {
    if (asked_in == 0) return 0;
    const FrameId window = recent_frames == 0 ? 1 : recent_frames;
    return asked_in > window ? asked_in - (window - 1) : 1;
}

struct CommitOptions {
    bool pin = false;
    // The frame the pages were asked for in (0: no rule). A page is as recent as the newest
    // frame that asked for it (request, or a commit's wanted_in), apart from its frame fence.
    FrameId wanted_in = 0;
    // With wanted_in: the pages wanted in this many frames up to it are kept too (1: only those
    // wanted in it or later). A view's feedback need not ask for every page it samples every
    // frame; pages it asked for a few frames ago are still its own.
    FrameId recent_frames = 1;
    // Each page's precedence (one per page given, or empty: all 0), kept with it while it is
    // resident. Pages may take the room of pages of a lower precedence even when those were
    // wanted since wanted_in: a streamer's coarser levels come before its finer ones, so that
    // a view needing more than the budget holds gets its coarse levels everywhere first.
    std::span<const std::uint32_t> precedence;
};

struct PageTableSettings {
    std::size_t region_size = 1_TiB;
    std::size_t budget_bytes = 1_GiB;  // rounded down to whole pages, at least one
    // Creates the eviction policy; empty: LRU.
    std::function<std::unique_ptr<EvictionPolicy>()> make_policy;
    // Access for committed pages; empty: read-write for the backend's own device.
    std::vector<DeviceAccess> access;
    // Map committed pages at their place in the region (address_of). When false, a commit only
    // assigns a physical page and makes no VMM call: the page is reached through its window
    // (set pool.map_windows) or through the physical page itself (a Vulkan import). That is
    // the fast path for a renderer that finds pages through an indirection table: a recycled
    // commit then costs bookkeeping instead of an unmap, a map and a set access.
    bool map_into_region = true;
    PagePoolSettings pool;
    PageMappingCallback on_committed;
    PageMappingCallback on_evicted;
    // Hold evicted physical pages back until the frames begun before their eviction complete
    // (see above). Only false for an app that reaches pages only through frame-fenced requests.
    bool defer_reuse = true;
    // With frames in flight an evicted page ripens for a few frames before it can be reused, so
    // a commit at a full budget waits. Keep up to this many evicted pages ripening beyond what
    // each commit needs (taken when a commit finds the budget full and frames in flight), so
    // that the next commits find ripe pages instead of waiting: streaming throughput, at the
    // cost of that many fewer resident pages while streaming. 0: evict only what is needed.
    // At most an eighth of the budget is evicted ahead (a small budget keeps what it holds),
    // and only pages not wanted since the commit's wanted_in (CommitOptions).
    std::size_t evict_ahead_pages = 0;
    // How many times a commit that hits out_of_memory evicts more pages and tries again. Those
    // pages are reused at once, so only while no frame is in flight, and begin_frame waits until
    // their evictions are reported; with frames in flight the commit fails with out_of_memory.
    int out_of_memory_retries = 4;
    Log log;
};

struct RequestResult {
    std::size_t resident = 0;        // usable as they are
    std::size_t queued = 0;          // newly queued
    std::size_t already_queued = 0;  // queued before, or being committed
};

struct PageTableStatistics {
    std::size_t page_size = 0;
    std::size_t budget_pages = 0;
    std::size_t resident_pages = 0;
    std::size_t pinned_pages = 0;
    std::size_t queued_pages = 0;
    FrameId current_frame = 0;
    FrameId completed_frame = 0;
    std::uint64_t requests = 0;               // pages asked for by request()
    std::uint64_t hits = 0;                   // ... of which were resident
    std::uint64_t commits = 0;                // pages committed
    std::uint64_t evictions = 0;              // pages evicted
    std::uint64_t over_budget_evictions = 0;  // ... of which by evict_over_budget
    std::uint64_t commit_batches = 0;
    std::uint64_t out_of_memory_retries = 0;
    std::uint64_t failed_batches = 0;  // batches rolled back after a backend error
    // Evicted physical pages held back for frames in flight (counted against the budget).
    std::size_t deferred_pages = 0;
    std::size_t deferred_peak = 0;
    std::uint64_t deferred_total = 0;   // pages ever held back
    std::uint64_t deferred_reused = 0;  // ... and reused once their frames were complete
    LatencySummary commit_latency;      // per page, batch time / pages, pool and maps included
    LatencySummary evict_latency;       // per page
    RegionStatistics region;
    PagePoolStatistics pool;
};

// The settings with pool.window_pages chosen when it was left at 0 (and windows are mapped):
// room for the larger of the budget and the device's memory (at most
// PagePoolSettings::default_window_pages beyond the budget), so that the budget can later be
// raised as far as the device allows. PageTable applies it; callers that size tables of their
// own by the windows may too.
PageTableSettings with_window_pages(Backend& backend, PageTableSettings settings);

class PageTable {
public:
    PageTable(Backend& backend, PageTableSettings settings = {});
    // Calls shutdown(); where that fails (pinned pages, frames in flight) the error is logged
    // and every page is evicted and released anyway. With frames in flight it first waits for
    // the device (Backend::synchronize), so that no work still in flight there reads a page
    // released here, and nothing is leaked either.
    ~PageTable();
    PageTable(const PageTable&) = delete;
    PageTable& operator=(const PageTable&) = delete;

    Backend& backend() const noexcept;
    const VirtualRegion& region() const noexcept;
    PagePool& pool() noexcept;
    std::size_t page_size() const noexcept;
    std::uint64_t page_count() const noexcept;
    DeviceAddress address_of(PageIndex page) const;
    std::size_t budget_pages() const;
    // A smaller budget takes effect at the next commit, or at once through evict_over_budget.
    // With release_idle the pool's release threshold follows the budget (never above the one
    // the table was made with): idle pool pages beyond it are released to the backend now and
    // at the pool's later trim points, so that pages given back leave the device. Raise the
    // budget with release_idle too, so that the pool may keep idle pages up to it again.
    // out_of_range when the pool maps windows and the budget holds more pages than
    // pool.window_pages; nothing changes then.
    void set_budget(std::size_t bytes, bool release_idle = false);
    // Gives memory back to a lowered budget in bounded steps, without waiting for a commit
    // (called once a frame, say, so that no frame stalls). While the pages held against the
    // budget (resident, being committed, held back) exceed it: held-back pages whose frames
    // are complete go back to the pool first, then victims chosen by the policy among pages
    // neither pinned nor used by a frame that is not complete are evicted and reported through
    // on_evicted like every eviction. With frames in flight their physical pages are held back
    // (see above) and a later call gives them to the pool; held-back pages count as leaving, so
    // nothing is evicted below the budget. At most max_pages pages leave per call. Returns how
    // many left (held-back pages given back and pages evicted): 0 when the budget is met or
    // nothing can go. A failed unmap is thrown once the pages that did go are accounted for.
    std::size_t evict_over_budget(std::size_t max_pages);

    FrameId current_frame() const;
    // The newest frame reported complete (frames up to it are complete).
    FrameId completed_frame() const;
    // Starts the next frame and returns its id (1, 2, ...).
    FrameId begin_frame();
    // The device has finished every frame up to and including `frame`.
    void complete_frame(FrameId frame);

    // Touches resident pages (recency, frame use) and queues the others, in the order given.
    RequestResult request(std::span<const PageIndex> pages);
    // Drops queued pages that are no longer wanted; pages not queued are ignored.
    void cancel(std::span<const PageIndex> pages);
    std::size_t queued_count() const;
    // Commits up to max_pages queued pages in one batch, oldest first, evicting by the policy
    // as the budget requires. Pages that do not fit (everything else pinned or fenced) stay
    // queued. Returns what it committed. On a backend failure the batch is undone, its pages
    // stay queued, and the error is thrown.
    std::vector<PageMapping> commit_queued(std::size_t max_pages);
    // Commits these pages now (queued ones leave the queue; resident ones are kept) and pins
    // them if asked. Pages all resident already need no room: that succeeds over a lowered
    // budget too. budget_exhausted when they cannot all fit; nothing changes then, except
    // that with frames in flight the victims they need are evicted and held back, so that a
    // later call finds room once those frames complete.
    std::vector<PageMapping> commit(std::span<const PageIndex> pages, bool pin = false);
    // The same, for pages asked for in frame `options.wanted_in` (a request that waited): they
    // take the room of pages wanted before that frame only. When they would fit now but only by
    // evicting pages wanted in that frame or later, `superseded`, and nothing changes: the
    // view needs more than the budget holds, and trading the pages it samples for these would
    // have it ask for them again next frame, for ever. 0: any page, as above.
    std::vector<PageMapping> commit(std::span<const PageIndex> pages, const CommitOptions& options);
    bool maps_into_region() const noexcept;
    // Where a resident page's bytes can be reached: its place in the region, or its window when
    // the table does not map into the region. not_mapped when the page is not resident;
    // not_supported when neither exists.
    DeviceAddress data_address(PageIndex page) const;

    // Pinned pages are never evicted. not_mapped for a page that is not resident.
    void pin(std::span<const PageIndex> pages);
    // invalid_argument for a page that is not pinned.
    void unpin(std::span<const PageIndex> pages);
    // Evicts now: not_mapped when not resident, busy when pinned or used by a frame that is
    // not complete. Checked for every page before any is evicted.
    void evict(std::span<const PageIndex> pages);
    // Sets the access of resident pages (once per contiguous run). not_supported when the table
    // does not map into the region.
    void protect(std::span<const PageIndex> pages, Access access);

    bool is_resident(PageIndex page) const;
    std::optional<PageMapping> lookup(PageIndex page) const;
    std::size_t resident_count() const;
    PageTableStatistics statistics() const;

    // Checks that the table, the region and the pool agree (every resident page mapped with
    // its handle, no physical page behind two pages, counts matching, the pool's own books
    // sound); throws corrupt_data with what disagrees. For tests and the stress tool; may run
    // while other threads use the table.
    void check_invariants() const;
    // The same, and that the backend holds exactly what the table accounts for on top of
    // `backend_baseline` (its live_resources() before the table was made): no handle, mapping
    // or reservation more or less. Only while no other thread uses the table or its backend.
    void check_invariants(const LiveResources& backend_baseline) const;
    // What the table holds in its backend: the region's reservation and mappings, the pool's
    // pages and windows.
    LiveResources held_resources() const;

    // Evicts everything and gives the pool's pages back. busy when pages are pinned, were used
    // in a frame that is not complete, or are held back for such a frame (the message names
    // how many and for which frames); then nothing changes.
    void shutdown();

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
