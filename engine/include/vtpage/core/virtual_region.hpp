// A reserved virtual address range cut into pages of the backend's granularity, into which
// physical pages are mapped (committed) and from which they are unmapped (decommitted). The
// region does not own physical pages: it maps the ones it is given (from a PagePool, usually)
// and hands them back on decommit.
//
// Batches are the fast path: commit() maps each page, then sets access once per contiguous run
// (one cuMemSetAccess over 2000 pages costs about 1/100 of 2000 calls on an H100), and
// decommit() unmaps each contiguous run with one call. A failure inside a batch undoes exactly
// what the batch did and leaves the region as it was.
//
// Should the undo itself fail (an unmap refused while a failed commit is rolled back), the
// mapping is not forgotten: the page is an orphan, not committed as far as callers are
// concerned, and the region unmaps it at the next commit or decommit and at destruction. A
// commit of an orphaned page whose unmap still fails throws that error.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/core/latency_histogram.hpp"

namespace vtpage {

using PageIndex = std::uint64_t;

struct VirtualRegionSettings {
    std::size_t size = 1_TiB;  // rounded up to whole pages
    // Access given to committed pages; empty: read-write for the backend's own device.
    std::vector<DeviceAccess> access;
    DeviceAddress address_hint = 0;
};

// One virtual page and the physical page to map there.
struct PagePlacement {
    PageIndex page = 0;
    PhysicalHandle handle;
};

// Backend calls the region made, with their latencies (per call, whatever its size).
struct RegionStatistics {
    std::uint64_t committed_pages = 0;
    std::uint64_t maps = 0;
    std::uint64_t unmaps = 0;
    std::uint64_t set_access_calls = 0;
    std::uint64_t orphaned_pages = 0;  // mappings left by a failed undo, waiting to be unmapped
    LatencySummary map_latency;
    LatencySummary unmap_latency;
    LatencySummary set_access_latency;
};

class VirtualRegion {
public:
    explicit VirtualRegion(Backend& backend, VirtualRegionSettings settings = {});
    // Unmaps whatever is still committed and frees the reservation. The physical pages stay
    // the caller's.
    ~VirtualRegion();
    VirtualRegion(const VirtualRegion&) = delete;
    VirtualRegion& operator=(const VirtualRegion&) = delete;

    Backend& backend() const noexcept { return backend_; }
    DeviceAddress base() const noexcept { return base_; }
    std::size_t size() const noexcept { return page_count_ * page_size_; }
    std::size_t page_size() const noexcept { return page_size_; }
    std::uint64_t page_count() const noexcept { return page_count_; }
    // out_of_range for a page past the end.
    DeviceAddress address_of(PageIndex page) const;
    PageIndex page_of(DeviceAddress address) const;

    // Maps each placement's handle at its page, then sets access per contiguous run.
    // Pages must be distinct and not committed; on any failure nothing stays mapped.
    void commit(std::span<const PagePlacement> placements);
    void commit(PageIndex page, PhysicalHandle handle) {
        PagePlacement placement{page, handle};
        commit(std::span(&placement, 1));
    }
    // Unmaps the pages (one call per contiguous run) and returns their handles in the order
    // given. Every page must be committed (not_mapped otherwise, before anything changes).
    std::vector<PhysicalHandle> decommit(std::span<const PageIndex> pages);
    PhysicalHandle decommit(PageIndex page) { return decommit(std::span(&page, 1)).front(); }
    // Sets the access of committed pages, once per contiguous run.
    void protect(std::span<const PageIndex> pages, std::span<const DeviceAccess> access);
    void protect(std::span<const PageIndex> pages, Access access);

    bool is_committed(PageIndex page) const;
    PhysicalHandle handle_at(PageIndex page) const;  // empty handle when not committed
    std::uint64_t committed_count() const;
    // Mappings a failed undo left behind (see above), not counted as committed.
    std::uint64_t orphaned_count() const;
    // What the region holds in its backend: its reservation and its mappings, orphans included.
    LiveResources held_resources() const;
    RegionStatistics statistics() const;

private:
    // Unmaps orphaned mappings, one call per run; those that fail stay orphaned. Throws the
    // first failure for a page in `needed` (sorted), if any. Caller holds the state lock.
    void unmap_orphans_nolock(std::span<const PageIndex> needed);
    void check_page(const char* operation, PageIndex page) const;
    // Sets access over runs of sorted pages; used by commit and protect.
    void set_access_by_runs(std::span<const PageIndex> sorted_pages,
                            std::span<const DeviceAccess> access);

    struct State;
    Backend& backend_;
    std::size_t page_size_;
    std::uint64_t page_count_;
    DeviceAddress base_ = 0;
    std::vector<DeviceAccess> access_;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
