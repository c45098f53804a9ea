#include "vtpage/core/page_pool.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace vtpage {

struct PagePool::State {
    explicit State(PagePoolSettings s) : settings(std::move(s)) {}

    PagePoolSettings settings;
    std::unique_ptr<VirtualRegion> windows;  // when settings.map_windows
    mutable std::mutex mutex;
    std::vector<PooledPage> idle;
    std::unordered_map<std::uint64_t, std::uint32_t> in_use;  // handle -> slot
    std::unordered_set<std::uint64_t> compressed;  // handles granted compression
    std::vector<std::uint32_t> free_slots;
    std::uint32_t next_slot = 0;
    std::size_t reserved_pages = 0;  // created and not yet released: in use + idle
    std::size_t reserved_pages_high = 0;
    std::size_t used_pages_high = 0;
    std::uint64_t creates = 0;
    std::uint64_t releases = 0;
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    LatencyHistogram create_latency;
    LatencyHistogram release_latency;
    std::thread warm_up_thread;
    std::atomic<bool> stop_warm_up{false};

    std::uint32_t take_slot() {
        if (!free_slots.empty()) {
            std::uint32_t slot = free_slots.back();
            free_slots.pop_back();
            return slot;
        }
        return next_slot++;
    }
    void note_highs() {
        reserved_pages_high = std::max(reserved_pages_high, reserved_pages);
        used_pages_high = std::max(used_pages_high, in_use.size());
    }
};

PagePool::PagePool(Backend& backend, PagePoolSettings settings)
    : backend_(backend),
      page_size_(backend.granularity(settings.page_options).minimum),
      state_(std::make_unique<State>(std::move(settings))) {
    if (state_->settings.map_windows) {
        if (state_->settings.window_pages == 0) {
            throw Error(Errc::invalid_argument, "PagePool", "window_pages is 0 with map_windows",
                        "window_pages=0");
        }
        VirtualRegionSettings windows;
        windows.size = state_->settings.window_pages * page_size_;
        state_->windows = std::make_unique<VirtualRegion>(backend_, windows);
    }
    if (state_->settings.warm_up_pages > 0) {
        warm_up(state_->settings.warm_up_pages, state_->settings.warm_up_in_background);
    }
}

PagePool::~PagePool() {
    state_->stop_warm_up = true;
    wait_for_warm_up();
    std::size_t leaked = 0;
    {
        std::lock_guard lock(state_->mutex);
        leaked = state_->in_use.size();
    }
    if (leaked > 0) {
        state_->settings.log.error("page pool destroyed with ", leaked,
                                   " pages still handed out; they are left to their holders");
    }
    trim_to(0);
}

std::vector<PooledPage> PagePool::acquire(std::size_t count) {
    std::vector<PooledPage> pages;
    pages.reserve(count);
    {
        std::lock_guard lock(state_->mutex);
        const std::size_t from_idle = std::min(count, state_->idle.size());
        for (std::size_t i = 0; i < from_idle; ++i) {
            PooledPage page = state_->idle.back();
            state_->idle.pop_back();
            state_->in_use[page.handle.value] = page.slot;
            pages.push_back(page);
        }
        state_->hits += from_idle;
        state_->note_highs();
    }
    try {
        while (pages.size() < count) {
            PooledPage page = create_page();
            {
                std::lock_guard lock(state_->mutex);
                state_->in_use[page.handle.value] = page.slot;
                ++state_->misses;
                state_->note_highs();
            }
            pages.push_back(page);
        }
    } catch (...) {
        // All or nothing: what was taken goes back to the idle list.
        std::lock_guard lock(state_->mutex);
        for (const PooledPage& page : pages) {
            state_->in_use.erase(page.handle.value);
            state_->idle.push_back(page);
        }
        throw;
    }
    return pages;
}

bool PagePool::maps_windows() const noexcept { return state_->windows != nullptr; }

PooledPage PagePool::create_page() {
    PhysicalHandle handle;
    {
        LatencyHistogram::Timer timer(state_->create_latency);
        handle = backend_.create(page_size_, state_->settings.page_options);
    }
    PooledPage page{handle, 0, 0};
    bool compressed = false;
    if (state_->settings.page_options.compressible) {
        try {
            compressed = backend_.is_compressed(handle);
        } catch (...) {
            backend_.release(handle);
            throw;
        }
    }
    {
        std::lock_guard lock(state_->mutex);
        page.slot = state_->take_slot();
    }
    try {
        if (state_->windows) {
            if (page.slot >= state_->windows->page_count()) {
                throw Error(Errc::out_of_memory, "PagePool::acquire",
                            detail::concat("the window region holds ",
                                           state_->windows->page_count(),
                                           " pages; raise PagePoolSettings::window_pages"),
                            detail::concat("slot=", page.slot));
            }
            state_->windows->commit(page.slot, handle);
            page.window = state_->windows->address_of(page.slot);
        }
        if (state_->settings.on_created) state_->settings.on_created(page);
    } catch (...) {
        try {
            if (state_->windows && page.slot < state_->windows->page_count() &&
                state_->windows->is_committed(page.slot)) {
                state_->windows->decommit(page.slot);
            }
            backend_.release(handle);
        } catch (const Error& error) {
            state_->settings.log.error("page pool: undoing a failed page creation: ", error.what());
        }
        std::lock_guard lock(state_->mutex);
        state_->free_slots.push_back(page.slot);
        throw;
    }
    std::lock_guard lock(state_->mutex);
    if (compressed) state_->compressed.insert(handle.value);
    ++state_->reserved_pages;
    ++state_->creates;
    state_->note_highs();
    return page;
}

void PagePool::destroy_page(const PooledPage& page) {
    if (state_->settings.on_destroyed) state_->settings.on_destroyed(page);
    if (state_->windows && state_->windows->is_committed(page.slot)) {
        state_->windows->decommit(page.slot);
    }
    {
        LatencyHistogram::Timer timer(state_->release_latency);
        backend_.release(page.handle);
    }
    std::lock_guard lock(state_->mutex);
    state_->compressed.erase(page.handle.value);
}

void PagePool::release(std::span<const PooledPage> pages) {
    {
        std::lock_guard lock(state_->mutex);
        for (const PooledPage& page : pages) {
            auto found = state_->in_use.find(page.handle.value);
            if (found == state_->in_use.end() || found->second != page.slot) {
                throw Error(Errc::invalid_argument, "PagePool::release",
                            "the page was not handed out by this pool",
                            detail::concat("handle=", page.handle.value, ", slot=", page.slot));
            }
        }
        for (const PooledPage& page : pages) {
            state_->in_use.erase(page.handle.value);
            state_->idle.push_back(page);
        }
    }
    trim();
}

void PagePool::trim() {
    std::size_t threshold;
    {
        std::lock_guard lock(state_->mutex);
        threshold = state_->settings.release_threshold;
    }
    trim_to(threshold);
}

void PagePool::set_release_threshold(std::size_t bytes) {
    {
        std::lock_guard lock(state_->mutex);
        state_->settings.release_threshold = bytes;
    }
    trim();
}

void PagePool::trim_to(std::size_t bytes) {
    std::vector<PooledPage> doomed;
    {
        std::lock_guard lock(state_->mutex);
        const std::size_t keep_pages = bytes / page_size_;
        while (!state_->idle.empty() && state_->reserved_pages - doomed.size() > keep_pages) {
            doomed.push_back(state_->idle.back());
            state_->idle.pop_back();
        }
    }
    std::vector<PooledPage> kept;
    for (const PooledPage& page : doomed) {
        try {
            destroy_page(page);
        } catch (const Error& error) {
            // The page stays in the pool; a later trim point tries again.
            state_->settings.log.warning("page pool: releasing a page failed: ", error.what());
            kept.push_back(page);
            continue;
        }
        std::lock_guard lock(state_->mutex);
        --state_->reserved_pages;
        ++state_->releases;
        state_->free_slots.push_back(page.slot);
    }
    if (!kept.empty()) {
        std::lock_guard lock(state_->mutex);
        state_->idle.insert(state_->idle.end(), kept.begin(), kept.end());
    }
}

void PagePool::warm_up(std::size_t pages, bool background) {
    wait_for_warm_up();
    state_->stop_warm_up = false;
    auto work = [this, pages] {
        while (!state_->stop_warm_up) {
            {
                std::lock_guard lock(state_->mutex);
                if (state_->reserved_pages >= pages) return;
            }
            try {
                PooledPage page = create_page();
                std::lock_guard lock(state_->mutex);
                state_->idle.push_back(page);
            } catch (const Error& error) {
                state_->settings.log.warning("page pool: warm-up stopped: ", error.what());
                return;
            }
        }
    };
    if (background) {
        state_->warm_up_thread = std::thread(work);
    } else {
        work();
    }
}

void PagePool::wait_for_warm_up() {
    if (state_->warm_up_thread.joinable()) state_->warm_up_thread.join();
}

PagePoolStatistics PagePool::statistics() const {
    std::lock_guard lock(state_->mutex);
    PagePoolStatistics s;
    s.page_size = page_size_;
    s.release_threshold = state_->settings.release_threshold;
    s.reserved_bytes = state_->reserved_pages * page_size_;
    s.reserved_bytes_high = state_->reserved_pages_high * page_size_;
    s.used_bytes = state_->in_use.size() * page_size_;
    s.used_bytes_high = state_->used_pages_high * page_size_;
    s.idle_pages = state_->idle.size();
    s.creates = state_->creates;
    s.releases = state_->releases;
    s.hits = state_->hits;
    s.misses = state_->misses;
    s.create_latency = state_->create_latency.summary();
    s.release_latency = state_->release_latency.summary();
    s.compression_requested = state_->settings.page_options.compressible;
    s.compressed_pages = state_->compressed.size();
    return s;
}

}  // namespace vtpage
