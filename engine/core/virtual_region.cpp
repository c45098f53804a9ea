#include "vtpage/core/virtual_region.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "core/page_directory.hpp"

namespace vtpage {

namespace {

// Calls run(first, count) for each run of consecutive pages in a sorted list.
template <typename Run>
void for_each_run(std::span<const PageIndex> sorted, Run run) {
    std::size_t start = 0;
    for (std::size_t i = 1; i <= sorted.size(); ++i) {
        if (i == sorted.size() || sorted[i] != sorted[i - 1] + 1) {
            run(sorted[start], i - start);
            start = i;
        }
    }
}

}  // namespace

struct VirtualRegion::State {
    explicit State(std::uint64_t pages) : handles(pages) {}
    mutable std::mutex mutex;
    core_detail::PageDirectory<std::uint64_t> handles;  // 0: not committed
    std::uint64_t committed = 0;
    std::map<PageIndex, std::uint64_t> orphans;  // page -> handle still mapped there
    std::atomic<std::uint64_t> maps{0}, unmaps{0}, set_access_calls{0};
    LatencyHistogram map_latency, unmap_latency, set_access_latency;
};

VirtualRegion::VirtualRegion(Backend& backend, VirtualRegionSettings settings)
    : backend_(backend), page_size_(backend.granularity().minimum) {
    if (settings.size == 0) {
        throw Error(Errc::invalid_argument, "VirtualRegion", "the size is 0", "size=0");
    }
    // Rounded up without overflow: (size + page - 1) wrapped SIZE_MAX around to 0 pages.
    page_count_ = settings.size / page_size_ + (settings.size % page_size_ != 0 ? 1 : 0);
    if (page_count_ > std::numeric_limits<std::size_t>::max() / page_size_) {
        throw Error(Errc::invalid_argument, "VirtualRegion",
                    "the size, in whole pages, is larger than any address space",
                    detail::concat("size=", settings.size, ", page_size=", page_size_));
    }
    access_ = std::move(settings.access);
    if (access_.empty()) access_.push_back({backend.capabilities().device, Access::read_write});
    base_ = backend_.reserve(page_count_ * page_size_, 0, settings.address_hint);
    state_ = std::make_unique<State>(page_count_);
}

VirtualRegion::~VirtualRegion() {
    // Unmap what is left (the pages themselves belong to whoever committed them). A few tries,
    // since a refused unmap leaves the reservation busy; a destructor cannot report, and the
    // backend's own accounting (live_resources) shows whatever is still left.
    constexpr int attempts = 3;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        try {
            std::vector<PageIndex> committed;
            state_->handles.for_each_set(
                [&](PageIndex page, std::uint64_t) { committed.push_back(page); });
            if (!committed.empty()) decommit(committed);
            {
                std::lock_guard lock(state_->mutex);
                unmap_orphans_nolock({});
                if (!state_->orphans.empty()) continue;
            }
            backend_.free_reservation(base_, page_count_ * page_size_);
            return;
        } catch (const Error&) {}
    }
}

void VirtualRegion::unmap_orphans_nolock(std::span<const PageIndex> needed) {
    if (state_->orphans.empty()) return;
    std::vector<PageIndex> pages;
    for (const auto& [page, handle] : state_->orphans) pages.push_back(page);
    std::exception_ptr failure;
    for_each_run(pages, [&](PageIndex first, std::size_t count) {
        try {
            backend_.unmap(base_ + first * page_size_, count * page_size_);
            ++state_->unmaps;
            for (PageIndex page = first; page < first + count; ++page) state_->orphans.erase(page);
        } catch (...) {
            for (PageIndex page = first; page < first + count; ++page) {
                if (!failure && std::binary_search(needed.begin(), needed.end(), page)) {
                    failure = std::current_exception();
                }
            }
        }
    });
    if (failure) std::rethrow_exception(failure);
}

void VirtualRegion::check_page(const char* operation, PageIndex page) const {
    if (page >= page_count_) {
        throw Error(Errc::out_of_range, operation,
                    detail::concat("the region has ", page_count_, " pages"),
                    detail::concat("page=", page));
    }
}

DeviceAddress VirtualRegion::address_of(PageIndex page) const {
    check_page("address_of", page);
    return base_ + page * page_size_;
}

PageIndex VirtualRegion::page_of(DeviceAddress address) const {
    if (address < base_ || address >= base_ + size()) {
        throw Error(Errc::out_of_range, "page_of", "the address is outside the region",
                    detail::concat("address=", address));
    }
    return (address - base_) / page_size_;
}

void VirtualRegion::set_access_by_runs(std::span<const PageIndex> sorted_pages,
                                       std::span<const DeviceAccess> access) {
    for_each_run(sorted_pages, [&](PageIndex first, std::size_t count) {
        LatencyHistogram::Timer timer(state_->set_access_latency);
        backend_.set_access(base_ + first * page_size_, count * page_size_, access);
        ++state_->set_access_calls;
    });
}

void VirtualRegion::commit(std::span<const PagePlacement> placements) {
    if (placements.empty()) return;
    std::vector<PagePlacement> sorted(placements.begin(), placements.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const PagePlacement& a, const PagePlacement& b) { return a.page < b.page; });
    std::lock_guard lock(state_->mutex);
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        check_page("commit", sorted[i].page);
        if (i > 0 && sorted[i].page == sorted[i - 1].page) {
            throw Error(Errc::invalid_argument, "commit", "a page appears twice in the batch",
                        detail::concat("page=", sorted[i].page));
        }
        if (state_->handles.get(sorted[i].page)) {
            throw Error(Errc::already_mapped, "commit", "the page is committed already",
                        detail::concat("page=", sorted[i].page));
        }
    }
    std::vector<PageIndex> pages;
    pages.reserve(sorted.size());
    for (const PagePlacement& placement : sorted) pages.push_back(placement.page);
    unmap_orphans_nolock(pages);  // the batch's own orphans must go; others are tried on the way
    pages.clear();
    try {
        for (const PagePlacement& placement : sorted) {
            LatencyHistogram::Timer timer(state_->map_latency);
            backend_.map(base_ + placement.page * page_size_, page_size_, placement.handle);
            ++state_->maps;
            pages.push_back(placement.page);
        }
        set_access_by_runs(pages, access_);
    } catch (...) {
        // Undo exactly the maps that succeeded, run by run: never a hole, never a page not ours.
        // A run whose unmap is refused (twice) becomes orphaned, unmapped later; the original
        // error is what the caller hears about.
        for_each_run(pages, [&](PageIndex first, std::size_t count) {
            for (int attempt = 0; attempt < 2; ++attempt) {
                try {
                    backend_.unmap(base_ + first * page_size_, count * page_size_);
                    return;
                } catch (const Error&) {}
            }
            for (std::size_t i = 0; i < count; ++i) {
                auto found = std::lower_bound(
                    sorted.begin(), sorted.end(), first + i,
                    [](const PagePlacement& a, PageIndex page) { return a.page < page; });
                state_->orphans[first + i] = found->handle.value;
            }
        });
        throw;
    }
    for (const PagePlacement& placement : sorted) {
        state_->handles.at(placement.page) = placement.handle.value;
    }
    state_->committed += sorted.size();
}

std::vector<PhysicalHandle> VirtualRegion::decommit(std::span<const PageIndex> pages) {
    std::vector<PhysicalHandle> handles;
    if (pages.empty()) return handles;
    std::vector<PageIndex> sorted(pages.begin(), pages.end());
    std::sort(sorted.begin(), sorted.end());
    std::lock_guard lock(state_->mutex);
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        check_page("decommit", sorted[i]);
        if (i > 0 && sorted[i] == sorted[i - 1]) {
            throw Error(Errc::invalid_argument, "decommit", "a page appears twice in the batch",
                        detail::concat("page=", sorted[i]));
        }
        if (!state_->handles.get(sorted[i])) {
            throw Error(Errc::not_mapped, "decommit", "the page is not committed",
                        detail::concat("page=", sorted[i]));
        }
    }
    handles.reserve(pages.size());
    for (PageIndex page : pages) handles.push_back(PhysicalHandle{state_->handles.get(page)});
    try {
        unmap_orphans_nolock({});
    } catch (const Error&) {
        // They stay orphaned; this decommit is about other pages.
    }
    // Each run is whole mappings, one per page, so one unmap covers it. If a run fails, the
    // runs before it stay decommitted and is_committed() tells the caller which pages those are.
    for_each_run(sorted, [&](PageIndex first, std::size_t count) {
        {
            LatencyHistogram::Timer timer(state_->unmap_latency);
            backend_.unmap(base_ + first * page_size_, count * page_size_);
        }
        ++state_->unmaps;
        for (PageIndex page = first; page < first + count; ++page) {
            state_->handles.at(page) = 0;
            --state_->committed;
        }
    });
    return handles;
}

void VirtualRegion::protect(std::span<const PageIndex> pages,
                            std::span<const DeviceAccess> access) {
    std::vector<PageIndex> sorted(pages.begin(), pages.end());
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::lock_guard lock(state_->mutex);
    for (PageIndex page : sorted) {
        check_page("protect", page);
        if (!state_->handles.get(page)) {
            throw Error(Errc::not_mapped, "protect", "the page is not committed",
                        detail::concat("page=", page));
        }
    }
    set_access_by_runs(sorted, access);
}

void VirtualRegion::protect(std::span<const PageIndex> pages, Access access) {
    DeviceAccess own{backend_.capabilities().device, access};
    protect(pages, std::span(&own, 1));
}

bool VirtualRegion::is_committed(PageIndex page) const {
    check_page("is_committed", page);
    std::lock_guard lock(state_->mutex);
    return state_->handles.get(page) != 0;
}

PhysicalHandle VirtualRegion::handle_at(PageIndex page) const {
    check_page("handle_at", page);
    std::lock_guard lock(state_->mutex);
    return PhysicalHandle{state_->handles.get(page)};
}

RegionStatistics VirtualRegion::statistics() const {
    RegionStatistics s;
    s.committed_pages = committed_count();
    s.maps = state_->maps;
    s.unmaps = state_->unmaps;
    s.set_access_calls = state_->set_access_calls;
    s.orphaned_pages = orphaned_count();
    s.map_latency = state_->map_latency.summary();
    s.unmap_latency = state_->unmap_latency.summary();
    s.set_access_latency = state_->set_access_latency.summary();
    return s;
}

std::uint64_t VirtualRegion::committed_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->committed;
}

}  // namespace vtpage

namespace vtpage {

std::uint64_t VirtualRegion::orphaned_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->orphans.size();
}

LiveResources VirtualRegion::held_resources() const {
    std::lock_guard lock(state_->mutex);
    LiveResources held;
    held.reservations = 1;
    held.reserved_bytes = page_count_ * page_size_;
    held.mappings = state_->committed + state_->orphans.size();
    held.mapped_bytes = held.mappings * page_size_;
    return held;
}

}  // namespace vtpage
