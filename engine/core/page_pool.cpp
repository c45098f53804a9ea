#include "vtpage/core/page_pool.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "vtpage/base/trace.hpp"

namespace vtpage {

// A page on its way back to the driver.
struct PagePool::Doomed {
    PooledPage page;
    bool announce = true;  // on_destroyed is still owed
    bool busy = false;     // a trim is destroying it right now
};

struct PagePool::State {
    explicit State(PagePoolSettings s) : settings(std::move(s)) {}

    PagePoolSettings settings;
    std::unique_ptr<VirtualRegion> windows;  // when settings.map_windows
    mutable std::mutex mutex;
    std::vector<PooledPage> idle;
    std::unordered_map<std::uint64_t, std::uint32_t> in_use;  // handle -> slot
    std::vector<Doomed> doomed;
    std::unordered_set<std::uint64_t> compressed;  // handles granted compression
    std::vector<std::uint32_t> free_slots;
    std::uint32_t next_slot = 0;
    std::size_t reserved_pages = 0;  // created and not yet released: in use + idle + doomed
    std::size_t reserved_pages_high = 0;
    std::size_t used_pages_high = 0;
    std::size_t in_flight = 0;  // creations and destructions between their steps
    std::uint64_t creates = 0;
    std::uint64_t releases = 0;
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    LatencyHistogram create_latency;
    LatencyHistogram release_latency;
    std::thread warm_up_thread;
    std::atomic<bool> stop_warm_up{false};

    std::uint32_t take_slot_nolock() {
        if (!free_slots.empty()) {
            std::uint32_t slot = free_slots.back();
            free_slots.pop_back();
            return slot;
        }
        return next_slot++;
    }
    void note_highs_nolock() {
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
            state_->settings.window_pages = PagePoolSettings::default_window_pages;
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
    stop_warm_up();
    std::size_t leaked = 0;
    {
        std::lock_guard lock(state_->mutex);
        leaked = state_->in_use.size();
    }
    if (leaked > 0) {
        state_->settings.log.error("page pool destroyed with ", leaked,
                                   " pages still handed out; they are left to their holders");
    }
    // Pages the backend refused to release get a few more tries.
    for (int attempt = 0; attempt < 3; ++attempt) {
        trim_to(0);
        std::lock_guard lock(state_->mutex);
        if (state_->doomed.empty()) break;
    }
    std::lock_guard lock(state_->mutex);
    if (!state_->doomed.empty()) {
        state_->settings.log.error("page pool destroyed with ", state_->doomed.size(),
                                   " pages the backend refused to release");
    }
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
        state_->note_highs_nolock();
    }
    try {
        while (pages.size() < count) pages.push_back(create_page(/*in_use=*/true));
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

PooledPage PagePool::create_page(bool in_use) {
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
        page.slot = state_->take_slot_nolock();
        ++state_->in_flight;
    }
    try {
        if (state_->windows) {
            if (page.slot >= state_->windows->page_count()) {
                throw Error(
                    Errc::out_of_memory, "PagePool::acquire",
                    detail::concat("the window region holds ", state_->windows->page_count(),
                                   " pages; raise PagePoolSettings::window_pages"),
                    detail::concat("slot=", page.slot));
            }
            state_->windows->commit(page.slot, handle);
            page.window = state_->windows->address_of(page.slot);
        }
        if (state_->settings.on_created) state_->settings.on_created(page);
    } catch (...) {
        // Undo: the page was never announced, so no on_destroyed. If the backend refuses to
        // let it go now, it is doomed and released at a later trim point.
        Doomed undo{page, /*announce=*/false, /*busy=*/true};
        const bool gone = destroy_page(undo);
        std::lock_guard lock(state_->mutex);
        --state_->in_flight;
        if (gone) {
            state_->free_slots.push_back(page.slot);
        } else {
            undo.busy = false;
            state_->doomed.push_back(undo);
            ++state_->reserved_pages;
            state_->note_highs_nolock();
        }
        throw;
    }
    std::lock_guard lock(state_->mutex);
    --state_->in_flight;
    if (compressed) state_->compressed.insert(handle.value);
    ++state_->reserved_pages;
    ++state_->creates;
    if (in_use) {
        state_->in_use[page.handle.value] = page.slot;
        ++state_->misses;
    } else {
        state_->idle.push_back(page);
    }
    state_->note_highs_nolock();
    return page;
}

void PagePool::announce_batch(const std::vector<Doomed>& claimed) {
    if (!state_->settings.on_destroying) return;
    std::vector<PooledPage> pages;
    for (const Doomed& doomed : claimed) {
        if (doomed.announce) pages.push_back(doomed.page);
    }
    if (pages.empty()) return;
    try {
        state_->settings.on_destroying(pages);
    } catch (const std::exception& error) {
        state_->settings.log.error("page pool: on_destroying threw: ", error.what());
    }
}

bool PagePool::destroy_page(Doomed& doomed) {
    const PooledPage& page = doomed.page;
    if (doomed.announce) {
        doomed.announce = false;
        try {
            if (state_->settings.on_destroyed) state_->settings.on_destroyed(page);
        } catch (const std::exception& error) {
            state_->settings.log.error("page pool: on_destroyed threw: ", error.what());
        }
    }
    try {
        if (state_->windows && page.slot < state_->windows->page_count() &&
            state_->windows->is_committed(page.slot)) {
            state_->windows->decommit(page.slot);
        }
        LatencyHistogram::Timer timer(state_->release_latency);
        backend_.release(page.handle);
    } catch (const Error& error) {
        state_->settings.log.warning("page pool: releasing a page failed (tried again later): ",
                                     error.what());
        return false;
    }
    std::lock_guard lock(state_->mutex);
    state_->compressed.erase(page.handle.value);
    return true;
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
    std::vector<Doomed> claimed;
    {
        std::lock_guard lock(state_->mutex);
        const std::size_t keep_pages = bytes / page_size_;
        std::size_t leaving = state_->doomed.size();
        while (!state_->idle.empty() && state_->reserved_pages - leaving > keep_pages) {
            state_->doomed.push_back({state_->idle.back()});
            state_->idle.pop_back();
            ++leaving;
        }
        for (Doomed& doomed : state_->doomed) {
            if (doomed.busy) continue;
            doomed.busy = true;
            claimed.push_back(doomed);
        }
        state_->in_flight += claimed.size();
    }
    if (claimed.empty()) return;
    announce_batch(claimed);
    std::vector<bool> gone(claimed.size());
    for (std::size_t i = 0; i < claimed.size(); ++i) gone[i] = destroy_page(claimed[i]);
    std::lock_guard lock(state_->mutex);
    state_->in_flight -= claimed.size();
    for (std::size_t i = 0; i < claimed.size(); ++i) {
        auto found = std::find_if(state_->doomed.begin(), state_->doomed.end(),
                                  [&](const Doomed& d) { return d.page == claimed[i].page; });
        if (gone[i]) {
            state_->doomed.erase(found);
            --state_->reserved_pages;
            ++state_->releases;
            state_->free_slots.push_back(claimed[i].page.slot);
        } else {
            *found = claimed[i];
            found->busy = false;
        }
    }
}

// Stops at `pages` or at the release threshold, whichever is lower, read at each page: a
// threshold lowered meanwhile (PageTable::set_budget with release_idle) is not undone, and a
// page created while it was lowered is released at once by the trim point after it.
void PagePool::warm_up(std::size_t pages, bool background) {
    wait_for_warm_up();
    state_->stop_warm_up = false;
    auto work = [this, pages] {
        while (!state_->stop_warm_up) {
            {
                std::lock_guard lock(state_->mutex);
                const std::size_t kept = state_->settings.release_threshold / page_size_;
                if (state_->reserved_pages >= std::min(pages, kept)) return;
            }
            try {
                create_page(/*in_use=*/false);
                trim();
            } catch (const Error& error) {
                state_->settings.log.warning("page pool: warm-up stopped: ", error.what());
                return;
            }
        }
    };
    if (background) {
        state_->warm_up_thread = std::thread([work] {
            trace::name_thread("vtpage warm-up");
            work();
        });
    } else {
        work();
    }
}

void PagePool::wait_for_warm_up() {
    if (state_->warm_up_thread.joinable()) state_->warm_up_thread.join();
}

void PagePool::stop_warm_up() {
    state_->stop_warm_up = true;
    wait_for_warm_up();
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
    s.doomed_pages = state_->doomed.size();
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

LiveResources PagePool::held_resources() const {
    LiveResources held;
    if (state_->windows) held = state_->windows->held_resources();
    std::lock_guard lock(state_->mutex);
    held.pages = state_->reserved_pages;
    held.page_bytes = state_->reserved_pages * page_size_;
    return held;
}

void PagePool::check_invariants() const {
    auto fail = [](const std::string& what) {
        throw Error(Errc::corrupt_data, "PagePool::check_invariants", what);
    };
    // All under the pool's lock (the windows' lock nests inside it; nothing takes them the
    // other way round), so that no trim or creation moves a page in the middle.
    std::lock_guard lock(state_->mutex);
    const State& s = *state_;
    std::unordered_set<std::uint64_t> handles;
    std::unordered_set<std::uint32_t> slots;
    auto file = [&](std::uint64_t handle, std::uint32_t slot, const char* where) {
        if (handle == 0) fail(detail::concat("an empty handle is ", where));
        if (!handles.insert(handle).second) {
            fail(detail::concat("handle ", handle, " is filed twice (last: ", where, ")"));
        }
        if (!slots.insert(slot).second) {
            fail(detail::concat("slot ", slot, " is used twice (last: ", where, ")"));
        }
        if (slot >= s.next_slot) fail(detail::concat("slot ", slot, " was never handed out"));
        // Idle and used pages keep their windows for their whole life.
        if (s.windows && std::string_view(where) != "doomed" &&
            s.windows->handle_at(slot).value != handle) {
            fail(detail::concat("the window of slot ", slot, " does not map its page"));
        }
    };
    for (const PooledPage& page : s.idle) file(page.handle.value, page.slot, "idle");
    for (const auto& [handle, slot] : s.in_use) file(handle, slot, "in use");
    for (const Doomed& doomed : s.doomed)
        file(doomed.page.handle.value, doomed.page.slot, "doomed");
    for (std::uint32_t slot : s.free_slots) {
        if (!slots.insert(slot).second) {
            fail(detail::concat("slot ", slot, " is free and taken, or free twice"));
        }
    }
    if (s.in_flight > 0) return;  // a creation or release is between its steps
    const std::size_t filed = s.idle.size() + s.in_use.size() + s.doomed.size();
    if (filed != s.reserved_pages) {
        fail(detail::concat("the pool counts ", s.reserved_pages, " pages but files ", filed));
    }
    if (slots.size() != s.next_slot) {
        fail(detail::concat(s.next_slot - slots.size(), " slots are lost"));
    }
    if (s.windows && s.windows->committed_count() > filed) {
        fail(detail::concat("the windows map ", s.windows->committed_count(),
                            " pages, the pool holds ", filed));
    }
}

}  // namespace vtpage
