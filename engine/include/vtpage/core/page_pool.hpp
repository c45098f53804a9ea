// A pool of physical pages. Committing takes a page from the pool and evicting gives it back,
// so that a physical page is created (and exported to Vulkan or another process) once and then
// recycled: a recycled commit costs a map and a batched set-access, not a cuMemCreate.
//
// The release threshold has the meaning of cudaMemPoolAttrReleaseThreshold: the pool holds on
// to up to that many bytes (pages in use plus idle pages); at each trim point (a page given
// back, or trim()) idle pages above it are released to the driver. 0 releases every idle page
// at once; SIZE_MAX (the default) keeps them all.
//
// A page whose release (or window unmap) the backend refuses is not lost: it is never handed
// out again, and each later trim point (and the destructor) tries again. on_destroyed runs
// once per page whatever happens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/core/latency_histogram.hpp"
#include "vtpage/core/virtual_region.hpp"

namespace vtpage {

struct PooledPage {
    PhysicalHandle handle;
    // A small dense number for the physical page, stable while the page exists and reused
    // after it is released: an index into per-page tables (Vulkan imports, the shader's
    // physical page array).
    std::uint32_t slot = 0;
    // Where the page is mapped for its whole life when the pool maps windows (0 otherwise).
    DeviceAddress window = 0;
    friend bool operator==(const PooledPage&, const PooledPage&) = default;
};

struct PagePoolSettings {
    PageOptions page_options;
    std::size_t release_threshold = SIZE_MAX;
    // Map every page once, for its whole life, read-write at window base + slot * page size.
    // Code that reaches pages through their windows (fill kernels, Vulkan imports) then pays
    // no VMM call when a page is recycled: on an H100 a remap costs ~50 us per page (unmap
    // ~20 us, set access ~30 us per mapping however the calls are batched), while a window
    // costs its map and set access once, when the page is created.
    bool map_windows = false;
    // Address space reserved for windows: the most pages the pool can hold when mapping
    // windows. 0: chosen for you: a PageTable's pool gets room for the larger of the table's
    // budget and the device's memory (at most default_window_pages beyond the budget), so that
    // the budget can be raised up to what the device holds; a pool on its own gets
    // default_window_pages (256 GiB of address space on 2 MiB pages).
    static constexpr std::size_t default_window_pages = std::size_t{128} * 1024;
    std::size_t window_pages = 0;
    // Pages to create ahead of need when the pool starts (at most what release_threshold keeps).
    std::size_t warm_up_pages = 0;
    bool warm_up_in_background = true;
    // Called once for each page created and once before each page is released to the driver,
    // from the thread that does it: where interop imports and forgets pages.
    std::function<void(const PooledPage&)> on_created;
    std::function<void(const PooledPage&)> on_destroyed;
    // Called once before a batch of pages is released (before their on_destroyed), from the
    // same thread: where interop waits once for the device to be done with all of them rather
    // than once a page (a trim can release hundreds).
    std::function<void(std::span<const PooledPage>)> on_destroying;
    Log log;
};

struct PagePoolStatistics {
    std::size_t page_size = 0;
    std::size_t release_threshold = 0;
    // As cudaMemPoolAttrReservedMemCurrent / High and UsedMemCurrent / High.
    std::size_t reserved_bytes = 0;
    std::size_t reserved_bytes_high = 0;
    std::size_t used_bytes = 0;
    std::size_t used_bytes_high = 0;
    std::size_t idle_pages = 0;
    std::size_t doomed_pages = 0;  // released once, refused by the backend, to try again
    std::uint64_t creates = 0;
    std::uint64_t releases = 0;  // pages released to the driver
    std::uint64_t hits = 0;      // pages handed out from the idle list
    std::uint64_t misses = 0;    // pages that had to be created
    LatencySummary create_latency;
    LatencySummary release_latency;
    // Whether pages are asked to be compressible (page_options.compressible), and how many of
    // the pages the pool holds now were granted compression: read back from each page when it
    // is created (the driver may decline, e.g. when its compression resources run out).
    bool compression_requested = false;
    std::size_t compressed_pages = 0;
};

class PagePool {
public:
    PagePool(Backend& backend, PagePoolSettings settings = {});
    // Stops the warm-up and releases the idle pages. Pages still handed out are logged as
    // leaked and left to their holders.
    ~PagePool();
    PagePool(const PagePool&) = delete;
    PagePool& operator=(const PagePool&) = delete;

    Backend& backend() const noexcept { return backend_; }
    std::size_t page_size() const noexcept { return page_size_; }
    bool maps_windows() const noexcept;

    // count pages, idle ones first, created ones for the rest; all or nothing (out_of_memory
    // when the backend cannot create enough, and then nothing is taken).
    std::vector<PooledPage> acquire(std::size_t count);
    PooledPage acquire() { return acquire(1).front(); }
    // Gives pages back (a trim point). invalid_argument for a page not handed out.
    void release(std::span<const PooledPage> pages);
    void release(const PooledPage& page) { release(std::span(&page, 1)); }

    // Releases idle pages until at most `bytes` are reserved (or no idle page is left).
    void trim_to(std::size_t bytes);
    // A trim point: trim_to(release threshold).
    void trim();
    void set_release_threshold(std::size_t bytes);
    // Creates idle pages until `pages` exist (never beyond the release threshold); on a
    // background thread if asked.
    void warm_up(std::size_t pages, bool background);
    // Waits for a background warm-up to finish; rethrows nothing (failures are logged).
    void wait_for_warm_up();
    // Stops a background warm-up after the page it is creating, and waits for it.
    void stop_warm_up();

    PagePoolStatistics statistics() const;
    // What the pool holds in its backend: its pages, and the windows' reservation and mappings.
    LiveResources held_resources() const;
    // Checks the pool's books (every page idle, in use or doomed exactly once, slots unique,
    // windows mapping their pages); throws corrupt_data with what disagrees. For tests and the
    // stress tool; may run while other threads use the pool.
    void check_invariants() const;

private:
    struct Doomed;
    // A new physical page with its slot (and window), filed as in use or idle.
    PooledPage create_page(bool in_use);
    // Runs on_destroyed (once), unmaps the window and releases the page; false (logged) when
    // the backend refuses, and then it is tried again later.
    bool destroy_page(Doomed& doomed);
    // on_destroying for the claimed pages not announced yet.
    void announce_batch(const std::vector<Doomed>& claimed);

    struct State;
    Backend& backend_;
    std::size_t page_size_;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
