#include "vtpage/core/page_table.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "base/ordered_delivery.hpp"
#include "base/ranked_mutex.hpp"
#include "base/test_points.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/core/frame_fenced_reuse.hpp"

namespace vtpage {

namespace {

using StateMutex = detail::RankedMutex;

enum class PageState : std::uint8_t { queued, committing, resident, evicting };

struct Entry {
    PageState state = PageState::queued;
    bool requested_while_evicting = false;  // queue it again once its eviction is done
    bool was_queued = false;                // before a commit() batch took it
    std::uint32_t pins = 0;
    FrameId last_used = 0;  // the newest frame that may sample it: its fence
    FrameId wanted_in = 0;  // the newest frame that asked for it: its recency (CommitOptions)
    std::uint32_t precedence = 0;  // CommitOptions::precedence
    PooledPage physical;
    std::uint64_t generation = 0;
};

std::string page_text(PageIndex page) { return detail::concat("page=", page); }

// The lowest precedence among the pages a commit must bring in (0 when none is given).
std::uint32_t lowest_missing_precedence(
    const std::vector<PageIndex>& unique, const std::vector<PageIndex>& resident_now,
    const std::unordered_map<PageIndex, std::uint32_t>& precedence_of) {
    if (precedence_of.empty()) return 0;
    std::uint32_t lowest = std::numeric_limits<std::uint32_t>::max();
    bool any = false;
    for (PageIndex page : unique) {
        if (std::binary_search(resident_now.begin(), resident_now.end(), page)) continue;
        lowest = std::min(lowest, precedence_of.at(page));
        any = true;
    }
    return any ? lowest : 0;
}

// The table's log reaches its pool unless the pool was given one of its own.
PageTableSettings with_pool_log(PageTableSettings settings) {
    settings.pool.log = settings.pool.log.or_else(settings.log);
    return settings;
}

}  // namespace

struct PageTable::State {
    State(Backend& b, PageTableSettings s)
        : backend(b),
          settings(with_pool_log(with_window_pages(b, std::move(s)))),
          region(b, VirtualRegionSettings{settings.region_size, settings.access, 0}),
          pool(b, settings.pool),
          policy(settings.make_policy ? settings.make_policy() : make_lru_policy()) {
        if (!policy) {
            throw Error(Errc::invalid_argument, "PageTable", "make_policy returned no policy");
        }
        // Page options (a device, compression) can change the granularity; the region is cut
        // into pages of the default one.
        if (pool.page_size() != region.page_size()) {
            throw Error(
                Errc::not_supported, "PageTable",
                detail::concat("pages with these options have a granularity of ", pool.page_size(),
                               " bytes, the region's pages ", region.page_size()),
                detail::concat("device=", settings.pool.page_options.device,
                               ", compressible=", settings.pool.page_options.compressible));
        }
        set_budget(settings.budget_bytes);
    }

    void set_budget(std::size_t bytes) {
        budget_pages = std::max<std::size_t>(1, bytes / region.page_size());
    }
    // A pool that maps windows holds at most window_pages pages, fixed when it was made.
    void check_budget(std::size_t bytes) const {
        const std::size_t pages = std::max<std::size_t>(1, bytes / region.page_size());
        if (pool.maps_windows() && pages > settings.pool.window_pages) {
            throw Error(Errc::out_of_range, "set_budget",
                        "the budget holds more pages than the pool has windows for "
                        "(pool.window_pages, fixed when the table was made)",
                        detail::concat("budget_pages=", pages,
                                       ", window_pages=", settings.pool.window_pages));
        }
    }
    bool evictable(const Entry& entry) const {
        return entry.state == PageState::resident && entry.pins == 0 &&
               entry.last_used <= completed_frame;
    }
    // Frames in flight may sample what the table mapped, asked for or not: evicted pages are
    // then held back instead of being reused in the same batch. With no frame in flight they
    // are reused at once, and begin_frame waits until such a batch has reported its evictions
    // (see reusing_at_once), so that no frame is begun with a mapping whose page is refilled.
    bool defers() const { return settings.defer_reuse && current_frame > completed_frame; }
    // Victims to take beyond what a commit of `missing` pages needs, so that evicted pages keep
    // ripening ahead of the next commits (PageTableSettings::evict_ahead_pages): only at a full
    // budget with frames in flight, and only up to the setting's count of held-back pages.
    // `needed`: the victims the commit takes anyway.
    std::ptrdiff_t evict_ahead_nolock(std::ptrdiff_t missing, std::ptrdiff_t needed,
                                      std::ptrdiff_t free, bool deferring) const {
        if (!deferring || settings.evict_ahead_pages == 0 || free > 0) return 0;
        // Pages on their way out are held back next: another thread's victims, not ours.
        const auto held_back = static_cast<std::ptrdiff_t>(room_to_come_nolock());
        const std::ptrdiff_t target = missing + static_cast<std::ptrdiff_t>(std::min(
                                                    settings.evict_ahead_pages, budget_pages / 8));
        return std::max<std::ptrdiff_t>(0, target - held_back - needed);
    }
    // Victims to be reused at once: begin_frame waits for their report.
    void begin_reuse_at_once(const std::vector<PageMapping>& victims) {
        if (!victims.empty()) ++reusing_at_once;
    }
    void end_reuse_at_once(std::size_t victims) {
        if (victims == 0) return;
        --reusing_at_once;
        reuse_reported.notify_all();
    }
    // Deferred pages whose frames are complete.
    std::size_t ripe_count_nolock() const { return deferred.ripe_count(completed_frame); }
    // Up to `count` deferred pages whose frames are complete, taken off the deferred list.
    std::vector<PooledPage> pop_ripe_nolock(std::size_t count) {
        return deferred.take_ripe(completed_frame, count);
    }
    // ... to be reused by a commit.
    std::vector<PooledPage> take_ripe_nolock(std::size_t count) {
        std::vector<PooledPage> pages = pop_ripe_nolock(count);
        deferred_reused += pages.size();
        return pages;
    }
    // Holds pages back until the frames begun so far are complete. Called only after the
    // evictions that freed them were reported.
    void defer_nolock(const std::vector<PooledPage>& pages) {
        // The defect switch hands held-back pages out at once, frames in flight or not.
        const FrameId fence =
            VTPAGE_TEST_SWITCH("defect.table_reuses_evicted_pages_at_once") ? 0 : current_frame;
        for (const PooledPage& page : pages) deferred.hold(page, fence);
        deferred_total += pages.size();
        deferred_peak = std::max(deferred_peak, deferred.size());
    }
    // Pages held against the budget: resident, being committed, held back, or on their way out
    // (still holding physical memory until they reach the pool or the held-back list).
    std::size_t held_pages_nolock() const {
        return resident + committing + deferred.size() + in_transit_nolock();
    }
    // Pages on their way out: room to come, as held-back pages are.
    std::size_t in_transit_nolock() const { return leaving + returning; }
    // Room that frees itself without new victims: held-back pages and pages on their way out.
    std::size_t room_to_come_nolock() const { return deferred.size() + in_transit_nolock(); }
    void check_page(const char* operation, PageIndex page) const {
        if (page >= region.page_count()) {
            throw Error(Errc::out_of_range, operation,
                        detail::concat("the table has ", region.page_count(), " pages"),
                        page_text(page));
        }
    }
    // Which resident pages may make room for a commit (CommitOptions): those wanted before
    // `asked_in` (any, when 0), and those of a precedence below `precedence`.
    struct VictimRule {
        FrameId asked_in = 0;
        std::uint32_t precedence = 0;
        bool recency_only = false;  // precedence takes no room of pages wanted since
        static VictimRule of(const CommitOptions& options, std::uint32_t precedence) {
            if (options.wanted_in == 0) return {};
            return {first_kept_frame(options.wanted_in, options.recent_frames), precedence};
        }
        bool allows(const Entry& entry) const {
            return asked_in == 0 || entry.wanted_in < asked_in ||
                   (!recency_only && entry.precedence < precedence);
        }
        // The same without taking the room of pages wanted since: for pages evicted ahead.
        VictimRule by_recency_only() const {
            VictimRule rule = *this;
            rule.recency_only = true;
            return rule;
        }
    };
    // Chooses up to count victims (any evictable page) and marks them evicting.
    std::vector<PageMapping> take_victims_nolock(std::size_t count) {
        return take_victims_nolock(count, VictimRule{.asked_in = 0, .precedence = 0});
    }
    // The same, among the pages the rule allows.
    std::vector<PageMapping> take_victims_nolock(std::size_t count, VictimRule rule) {
        std::vector<PageMapping> victims;
        if (count == 0) return victims;
        auto pages = policy->choose_victims(count, [this, rule](PageIndex page) {
            auto found = entries.find(page);
            return found != entries.end() && evictable(found->second) && rule.allows(found->second);
        });
        for (PageIndex page : pages) victims.push_back(mark_evicting_nolock(page));
        return victims;
    }
    // Victims for a commit: `needed` by the rule, then up to `ahead` more by its recency alone
    // (never a page the view wants now, whatever its precedence). Among the pages the rule
    // allows, the policy's order (LRU) decides: choosing finer levels first kept no fewer reads
    // on the photo tour, and made the schedules that test the reuse rule at begin_frame too rare
    // to reach on a 16-core machine.
    std::vector<PageMapping> take_victims_nolock(std::size_t needed, std::size_t ahead,
                                                 VictimRule rule) {
        std::vector<PageMapping> victims = take_victims_nolock(needed, rule);
        if (victims.size() < needed || ahead == 0) return victims;
        std::vector<PageMapping> more = take_victims_nolock(ahead, rule.by_recency_only());
        victims.insert(victims.end(), more.begin(), more.end());
        return victims;
    }
    // How many pages (up to `count`) the rule allows and not pinned wait for their frames:
    // evictable once those complete.
    std::size_t older_fenced_nolock(std::size_t count, VictimRule rule) {
        if (count == 0) return 0;
        return policy
            ->choose_victims(count,
                             [this, rule](PageIndex page) {
                                 auto found = entries.find(page);
                                 if (found == entries.end()) return false;
                                 const Entry& entry = found->second;
                                 return entry.state == PageState::resident && entry.pins == 0 &&
                                        entry.last_used > completed_frame && rule.allows(entry);
                             })
            .size();
    }
    // A resident page becomes a victim: out of the policy, counted as evicting.
    PageMapping mark_evicting_nolock(PageIndex page) {
        Entry& entry = entries.at(page);
        entry.state = PageState::evicting;
        policy->removed(page);
        --resident;
        ++evicting;
        return {page, entry.physical, entry.generation};
    }
    // A victim whose unmap failed is resident again.
    void restore_victim_nolock(const PageMapping& victim) {
        Entry& entry = entries.at(victim.page);
        entry.state = PageState::resident;
        --evicting;
        ++resident;
        policy->inserted(victim.page);
    }
    // Victims that are gone: forgotten, or queued again if requested meanwhile.
    void forget_victims_nolock(const std::vector<PageMapping>& gone) {
        for (const PageMapping& victim : gone) {
            auto found = entries.find(victim.page);
            --evicting;
            ++evictions;
            if (found->second.requested_while_evicting) {
                found->second = Entry{};
                ++queued;
                queue.push_back(victim.page);
            } else {
                entries.erase(found);
            }
        }
    }
    // Unmaps the victims; returns those actually evicted, and restores the others (the error,
    // if any, is returned through `failure`). Called without the lock.
    std::vector<PageMapping> unmap_victims(const std::vector<PageMapping>& victims,
                                           std::exception_ptr& failure) {
        if (victims.empty()) return {};
        if (!settings.map_into_region) return victims;
        std::vector<PageIndex> pages;
        pages.reserve(victims.size());
        for (const auto& victim : victims) pages.push_back(victim.page);
        try {
            VTPAGE_TRACE_SCOPE("vmm", "decommit", .count = pages.size());
            region.decommit(pages);
            return victims;
        } catch (...) {
            failure = std::current_exception();
        }
        std::vector<PageMapping> evicted;
        std::lock_guard lock(mutex);
        for (const auto& victim : victims) {
            if (region.is_committed(victim.page)) {
                restore_victim_nolock(victim);
            } else {
                evicted.push_back(victim);
            }
        }
        return evicted;
    }
    // The tail of every eviction, called without the lock: unmaps the victims (counted in
    // `leaving` by the caller, under the lock that marked them), forgets those gone and reports
    // them. Returns their physical pages, counted in `returning` until they reach the pool or
    // the held-back list; the lock is released again on return (by report).
    std::vector<PooledPage> evict_victims(std::unique_lock<StateMutex>& lock,
                                          const std::vector<PageMapping>& victims,
                                          std::exception_ptr& failure, bool record_latency) {
        VTPAGE_TRACE_SCOPE("vmm", "evict batch", .count = victims.size());
        const auto start = std::chrono::steady_clock::now();
        const std::vector<PageMapping> evicted = unmap_victims(victims, failure);
        std::vector<PooledPage> physical;
        physical.reserve(evicted.size());
        for (const auto& victim : evicted) physical.push_back(victim.physical);
        if (record_latency && !evicted.empty()) {
            const auto per_page = (std::chrono::steady_clock::now() - start) / evicted.size();
            for (std::size_t i = 0; i < evicted.size(); ++i) evict_latency.record(per_page);
        }
        lock.lock();
        forget_victims_nolock(evicted);
        leaving -= victims.size();
        returning += physical.size();
        report(lock, evicted, {});
        return physical;
    }
    // Evicts victims marked under the lock (held on entry, released on return): with frames in
    // flight their physical pages are held back, else they go back to the pool. Returns how
    // many were evicted; a failed unmap comes back through `failure`.
    std::size_t evict_marked(std::unique_lock<StateMutex>& lock,
                             const std::vector<PageMapping>& victims, std::exception_ptr& failure) {
        if (victims.empty()) {
            lock.unlock();
            return 0;
        }
        const bool defer = defers();
        if (!defer) begin_reuse_at_once(victims);
        leaving += victims.size();
        lock.unlock();
        std::vector<PooledPage> physical = evict_victims(lock, victims, failure, true);
        lock.lock();
        if (defer) {
            defer_nolock(physical);
            returning -= physical.size();
        } else {
            end_reuse_at_once(victims.size());
        }
        lock.unlock();
        if (!defer) release_to_pool(physical);
        return physical.size();
    }
    // Gives pages back to the pool; called after the evictions that freed them are reported.
    // `returning` counts them meanwhile (raised by the caller under the lock).
    void release_to_pool(const std::vector<PooledPage>& pages) {
        if (pages.empty()) return;
        try {
            VTPAGE_TRACE_SCOPE("vmm", "pool release", .count = pages.size());
            pool.release(pages);
        } catch (const Error& error) {
            settings.log.error("page table: returning pages to the pool failed: ", error.what());
        }
        std::lock_guard lock(mutex);
        returning -= pages.size();
    }
    void compact_queue() {
        if (queue.size() < 2 * queued + 1024) return;
        std::deque<PageIndex> live;
        std::unordered_set<PageIndex> seen;
        for (PageIndex page : queue) {
            auto found = entries.find(page);
            if (found != entries.end() && found->second.state == PageState::queued &&
                seen.insert(page).second) {
                live.push_back(page);
            }
        }
        queue.swap(live);
    }
    // Runs the callbacks for a change made under the lock, after every earlier change's
    // callbacks and before every later one's, with no lock held (a callback may call the
    // table's queries). Takes a ticket under the state lock, then waits for its turn.
    void report(std::unique_lock<StateMutex>& lock, const std::vector<PageMapping>& evicted,
                const std::vector<PageMapping>& committed) {
        detail::OrderedDelivery::Ticket ticket = reports.take();
        lock.unlock();
        reports.deliver(ticket, [&] {
            try {
                if (!evicted.empty() && settings.on_evicted) settings.on_evicted(evicted);
                if (!committed.empty() && settings.on_committed) settings.on_committed(committed);
            } catch (const std::exception& error) {
                settings.log.error("page table: a callback threw: ", error.what());
            }
        });
    }

    Backend& backend;
    PageTableSettings settings;
    VirtualRegion region;
    PagePool pool;
    std::unique_ptr<EvictionPolicy> policy;

    mutable StateMutex mutex{detail::LockRank::page_table_state, "page table state"};
    detail::OrderedDelivery reports{"page table reports"};  // tickets taken under mutex
    std::unordered_map<PageIndex, Entry> entries;
    std::deque<PageIndex> queue;  // may hold stale or repeated pages; `queued` is the truth
    std::size_t queued = 0, resident = 0, committing = 0, evicting = 0, pinned = 0;
    // Physical pages on their way out, which still count against the budget: `leaving` from
    // the plan that takes them until the batch relocks (victims not reused by their own batch,
    // and held-back pages beyond a lowered budget), then `returning` until they reach the pool
    // or the held-back list.
    std::size_t leaving = 0;
    std::size_t returning = 0;
    std::size_t budget_pages = 1;
    FrameId current_frame = 0;
    FrameId completed_frame = 0;
    std::uint64_t generation = 0;
    std::uint64_t requests = 0, hits = 0, commits = 0, evictions = 0, batches = 0;
    std::uint64_t out_of_memory_retries = 0, failed_batches = 0, over_budget_evictions = 0;
    // Orders set_budget calls, so that the pool follows the last budget.
    detail::RankedMutex budget_mutex{detail::LockRank::page_table_budget, "page table budget"};
    // Evicted pages' physical pages, each held back until the frames that may still reach it
    // through its old mapping (those begun when its eviction was reported) have completed.
    FrameFencedReuse<PooledPage> deferred;
    std::size_t reusing_at_once = 0;  // batches whose victims are reused without deferring
    std::condition_variable_any reuse_reported;
    std::size_t deferred_peak = 0;
    std::uint64_t deferred_total = 0, deferred_reused = 0;
    LatencyHistogram commit_latency;
    LatencyHistogram evict_latency;

    // One commit batch, from plan to finish.
    struct Batch {
        std::vector<PageIndex> candidates;  // to commit, in order
        std::vector<PageMapping> victims;   // to evict first
        std::vector<PooledPage> recycled;   // deferred pages whose frames are complete
        std::vector<PooledPage> surplus;    // ... beyond a lowered budget: back to the pool
        bool defer_victims = false;         // victims' pages are held back, not used here
        bool pin = false;
        bool from_queue = false;
        FrameId wanted_in = 0;  // CommitOptions::wanted_in (0: the current frame)
        VictimRule rule;        // who may make room for it
    };
    std::vector<PageMapping> run_batch(std::unique_lock<StateMutex>& lock, Batch batch);
    // The batch's pages that leave the budget: its victims when held back, else those beyond
    // what its candidates reuse, and its surplus.
    static std::size_t leaving_pages(const Batch& batch) {
        return unused_victims(batch) + batch.surplus.size();
    }
    // Victims the batch does not reuse itself: all of them when they are held back, else those
    // beyond its candidates (with the ripe pages it recycles).
    static std::size_t unused_victims(const Batch& batch) {
        if (batch.defer_victims) return batch.victims.size();
        const std::size_t reusable = batch.victims.size() + batch.recycled.size();
        return reusable > batch.candidates.size() ? reusable - batch.candidates.size() : 0;
    }
    // Held-back pages that are free again but beyond the budget (it was lowered) leave with
    // the batch. The batch's candidates count as committing.
    void take_surplus_nolock(Batch& batch) {
        const std::size_t after =
            held_pages_nolock() + (batch.defer_victims ? batch.victims.size() : 0);
        if (after > budget_pages) batch.surplus = pop_ripe_nolock(after - budget_pages);
    }
};

std::vector<PageMapping> PageTable::State::run_batch(std::unique_lock<StateMutex>& lock,
                                                     Batch batch) {
    const std::size_t leaving_here = leaving_pages(batch);
    leaving += leaving_here;
    lock.unlock();
    VTPAGE_TRACE_SCOPE("vmm", "commit batch", .count = batch.candidates.size());
    const auto start = std::chrono::steady_clock::now();
    std::exception_ptr failure;
    std::vector<PageMapping> evicted = unmap_victims(batch.victims, failure);
    std::vector<PooledPage> pages = std::move(batch.recycled);
    std::vector<PooledPage> held_back;  // deferred once the evictions are reported
    for (const auto& victim : evicted) {
        (batch.defer_victims ? held_back : pages).push_back(victim.physical);
    }
    const std::size_t wanted = batch.candidates.size();
    // Pages that go back to the pool, once the evictions are reported: a page given back
    // earlier could be committed elsewhere and reported before its eviction here.
    std::vector<PooledPage> to_pool = std::move(batch.surplus);
    // Evicted pages beyond what the batch needs (a lowered budget) go back to the pool.
    if (pages.size() > wanted) {
        to_pool.insert(to_pool.end(), pages.begin() + static_cast<std::ptrdiff_t>(wanted),
                       pages.end());
        pages.resize(wanted);
    }
    std::vector<PageMapping> extra_victims_evicted;
    std::size_t extra_gates = 0;  // begin_reuse_at_once calls for extra victims
    if (!failure && pages.size() < wanted) {
        for (int attempt = 0;; ++attempt) {
            std::exception_ptr out_of_memory;
            try {
                VTPAGE_TRACE_SCOPE("vmm", "pool acquire", .count = wanted - pages.size());
                auto fresh = pool.acquire(wanted - pages.size());
                pages.insert(pages.end(), fresh.begin(), fresh.end());
                break;
            } catch (const Error& error) {
                // With frames in flight an evicted page cannot be reused at once: the batch is
                // undone and tried again once deferred pages are free.
                if (error.code() != Errc::out_of_memory ||
                    attempt >= settings.out_of_memory_retries || batch.defer_victims) {
                    failure = std::current_exception();
                    break;
                }
                out_of_memory = std::current_exception();
            }
            // The device is full below our budget: evict beyond what the budget asks, retry.
            // The extra victims are reused at once, so they follow the planned victims' rule:
            // not while a frame is in flight (one may have begun since the plan), and
            // begin_frame waits for their report.
            std::vector<PageMapping> more;
            bool frames_in_flight = false;
            {
                std::lock_guard relock(mutex);
                frames_in_flight = defers();
                if (!frames_in_flight) {
                    ++out_of_memory_retries;
                    more = take_victims_nolock(wanted - pages.size(), batch.rule);
                    if (!more.empty()) {
                        begin_reuse_at_once(more);
                        ++extra_gates;
                    }
                }
            }
            if (frames_in_flight) {
                failure = out_of_memory;
                break;
            }
            if (more.empty()) {
                failure = std::make_exception_ptr(
                    Error(Errc::out_of_memory, "commit",
                          "the device is out of memory and no page can be evicted",
                          detail::concat("pages=", wanted)));
                break;
            }
            settings.log.info("page table: out of memory; evicting ", more.size(),
                              " more pages and trying again");
            auto gone = unmap_victims(more, failure);
            for (const auto& victim : gone) pages.push_back(victim.physical);
            extra_victims_evicted.insert(extra_victims_evicted.end(), gone.begin(), gone.end());
            if (failure) break;
        }
    }
    std::vector<PageMapping> committed;
    if (!failure) {
        std::vector<PagePlacement> placements;
        placements.reserve(wanted);
        for (std::size_t i = 0; i < wanted; ++i) {
            placements.push_back({batch.candidates[i], pages[i].handle});
        }
        try {
            VTPAGE_TRACE_SCOPE("vmm", "map", .count = placements.size());
            if (settings.map_into_region) region.commit(placements);
        } catch (...) {
            failure = std::current_exception();
        }
    }
    if (failure) to_pool.insert(to_pool.end(), pages.begin(), pages.end());
    const auto elapsed = std::chrono::steady_clock::now() - start;

    lock.lock();
    leaving -= leaving_here;
    evicted.insert(evicted.end(), extra_victims_evicted.begin(), extra_victims_evicted.end());
    forget_victims_nolock(evicted);
    if (failure) {
        ++failed_batches;
        // The batch's pages go back to where they were: queued (at the front, in order) or
        // forgotten.
        for (auto it = batch.candidates.rbegin(); it != batch.candidates.rend(); ++it) {
            Entry& entry = entries.at(*it);
            --committing;
            if (batch.from_queue || entry.was_queued) {
                entry = Entry{};
                ++queued;
                queue.push_front(*it);
            } else {
                entries.erase(*it);
            }
        }
    } else {
        ++batches;
        commits += wanted;
        if (wanted > 0) {
            const auto per_page = elapsed / wanted;
            for (std::size_t i = 0; i < wanted; ++i) commit_latency.record(per_page);
        }
        committed.reserve(wanted);
        for (std::size_t i = 0; i < wanted; ++i) {
            Entry& entry = entries.at(batch.candidates[i]);
            entry.state = PageState::resident;
            entry.physical = pages[i];
            entry.generation = ++generation;
            entry.last_used = current_frame;
            entry.wanted_in =
                std::max(entry.wanted_in, batch.wanted_in != 0 ? batch.wanted_in : current_frame);
            entry.was_queued = false;
            if (batch.pin) {
                if (entry.pins++ == 0) ++pinned;
            }
            --committing;
            ++resident;
            policy->inserted(batch.candidates[i]);
            committed.push_back({batch.candidates[i], entry.physical, entry.generation});
        }
    }
    returning += to_pool.size() + held_back.size();
    report(lock, evicted, committed);
    if ((!batch.defer_victims && !batch.victims.empty()) || extra_gates > 0) {
        lock.lock();
        if (!batch.defer_victims) end_reuse_at_once(batch.victims.size());
        for (; extra_gates > 0; --extra_gates) end_reuse_at_once(1);
        lock.unlock();
    }
    if (!held_back.empty()) {
        // Tagged after the report: a frame begun from now on uploads a table without them.
        lock.lock();
        defer_nolock(held_back);
        returning -= held_back.size();
        lock.unlock();
    }
    release_to_pool(to_pool);
    if (failure) std::rethrow_exception(failure);
    return committed;
}

PageTable::PageTable(Backend& backend, PageTableSettings settings)
    : state_(std::make_unique<State>(backend, std::move(settings))) {}

PageTable::~PageTable() {
    try {
        shutdown();
        return;
    } catch (const Error& error) {
        state_->settings.log.error("page table destroyed while in use (", error.what(),
                                   "); evicting everything anyway");
    }
    bool frames_in_flight = false;
    {
        std::lock_guard lock(state_->mutex);
        frames_in_flight = state_->current_frame > state_->completed_frame;
    }
    // Pages that frames in flight may still read are released below: the device's work is
    // waited for instead of assumed done. A device that cannot synchronize runs no more work.
    if (frames_in_flight) {
        try {
            state_->backend.synchronize();
        } catch (const Error& error) {
            state_->settings.log.error("page table: waiting for the device failed: ", error.what());
        }
    }
    {
        std::lock_guard lock(state_->mutex);
        for (auto& [page, entry] : state_->entries) entry.pins = 0;
        state_->pinned = 0;
        state_->completed_frame = state_->current_frame;
    }
    try {
        shutdown();
    } catch (const Error& error) {
        state_->settings.log.error("page table: forced shutdown failed: ", error.what());
    }
}

Backend& PageTable::backend() const noexcept { return state_->backend; }
const VirtualRegion& PageTable::region() const noexcept { return state_->region; }
PagePool& PageTable::pool() noexcept { return state_->pool; }
std::size_t PageTable::page_size() const noexcept { return state_->region.page_size(); }
std::uint64_t PageTable::page_count() const noexcept { return state_->region.page_count(); }
DeviceAddress PageTable::address_of(PageIndex page) const {
    return state_->region.address_of(page);
}

std::size_t PageTable::budget_pages() const {
    std::lock_guard lock(state_->mutex);
    return state_->budget_pages;
}

void PageTable::set_budget(std::size_t bytes, bool release_idle) {
    State& s = *state_;
    std::lock_guard order(s.budget_mutex);
    std::size_t budget_bytes = 0;
    {
        std::lock_guard lock(s.mutex);
        s.check_budget(bytes);
        s.set_budget(bytes);
        budget_bytes = s.budget_pages * s.region.page_size();
    }
    // Outside the table's lock: the trim releases pages to the backend.
    if (release_idle) {
        s.pool.set_release_threshold(std::min(s.settings.pool.release_threshold, budget_bytes));
    }
}

std::size_t PageTable::evict_over_budget(std::size_t max_pages) {
    std::unique_lock lock(state_->mutex);
    State& s = *state_;
    const std::size_t held = s.held_pages_nolock();
    if (held <= s.budget_pages || max_pages == 0) return 0;
    const std::size_t over = held - s.budget_pages;
    // Held-back pages leave the budget by themselves once ripe, and pages on their way out
    // once they reach the pool or the held-back list: victims only for the rest.
    const std::size_t waiting = s.room_to_come_nolock();
    std::vector<PooledPage> ripe = s.pop_ripe_nolock(std::min(over, max_pages));
    s.returning += ripe.size();
    std::vector<PageMapping> victims =
        s.take_victims_nolock(std::min(max_pages - ripe.size(), over - std::min(over, waiting)));
    std::exception_ptr failure;
    const std::size_t evicted = s.evict_marked(lock, victims, failure);
    s.release_to_pool(ripe);  // their evictions were reported when they were held back
    lock.lock();
    s.over_budget_evictions += evicted;
    lock.unlock();
    if (failure) std::rethrow_exception(failure);
    return ripe.size() + evicted;
}

FrameId PageTable::current_frame() const {
    std::lock_guard lock(state_->mutex);
    return state_->current_frame;
}

FrameId PageTable::completed_frame() const {
    std::lock_guard lock(state_->mutex);
    return state_->completed_frame;
}

FrameId PageTable::begin_frame() {
    VTPAGE_TEST_POINT("table.begin_frame");
    std::unique_lock lock(state_->mutex);
    // A batch planned with no frame in flight reuses its victims' pages at once: a frame begun
    // before it reports the evictions could upload the old mappings.
    if (!VTPAGE_TEST_SWITCH("defect.begin_frame_ignores_pages_reused_at_once")) {
        state_->reuse_reported.wait(lock, [&] { return state_->reusing_at_once == 0; });
    }
    const FrameId frame = ++state_->current_frame;
    if (TraceRecorder* trace = trace::active()) trace->frame_marker("begin_frame", frame);
    return frame;
}

void PageTable::complete_frame(FrameId frame) {
    VTPAGE_TEST_POINT("table.complete_frame");
    std::lock_guard lock(state_->mutex);
    if (frame > state_->current_frame) {
        throw Error(Errc::invalid_argument, "complete_frame",
                    detail::concat("frame ", frame, " has not begun (the current frame is ",
                                   state_->current_frame, ")"),
                    detail::concat("frame=", frame));
    }
    state_->completed_frame = std::max(state_->completed_frame, frame);
    if (TraceRecorder* trace = trace::active()) trace->frame_marker("complete_frame", frame);
}

RequestResult PageTable::request(std::span<const PageIndex> pages) {
    RequestResult result;
    std::lock_guard lock(state_->mutex);
    for (PageIndex page : pages) state_->check_page("request", page);
    for (PageIndex page : pages) {
        ++state_->requests;
        auto [it, inserted] = state_->entries.try_emplace(page);
        Entry& entry = it->second;
        if (inserted) {
            entry.state = PageState::queued;
            ++state_->queued;
            state_->queue.push_back(page);
            ++result.queued;
            continue;
        }
        switch (entry.state) {
            case PageState::resident:
                entry.last_used = state_->current_frame;
                entry.wanted_in = state_->current_frame;
                state_->policy->accessed(page);
                ++state_->hits;
                ++result.resident;
                break;
            case PageState::committing:
                entry.last_used = state_->current_frame;
                entry.wanted_in = state_->current_frame;
                ++result.already_queued;
                break;
            case PageState::queued:
                ++result.already_queued;
                break;
            case PageState::evicting:
                entry.requested_while_evicting = true;
                ++result.queued;
                break;
        }
    }
    return result;
}

void PageTable::cancel(std::span<const PageIndex> pages) {
    std::lock_guard lock(state_->mutex);
    for (PageIndex page : pages) {
        auto found = state_->entries.find(page);
        if (found == state_->entries.end()) continue;
        if (found->second.state == PageState::queued) {
            state_->entries.erase(found);
            --state_->queued;
        } else if (found->second.state == PageState::evicting) {
            found->second.requested_while_evicting = false;
        }
    }
    state_->compact_queue();
}

std::size_t PageTable::queued_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->queued;
}

std::vector<PageMapping> PageTable::commit_queued(std::size_t max_pages) {
    std::unique_lock lock(state_->mutex);
    State& s = *state_;
    State::Batch batch;
    batch.from_queue = true;
    while (batch.candidates.size() < max_pages && !s.queue.empty()) {
        PageIndex page = s.queue.front();
        s.queue.pop_front();
        auto found = s.entries.find(page);
        if (found == s.entries.end() || found->second.state != PageState::queued) continue;
        found->second.state = PageState::committing;
        --s.queued;
        ++s.committing;
        batch.candidates.push_back(page);
    }
    if (batch.candidates.empty()) return {};
    // Room for the batch: free budget and deferred pages whose frames are complete, then
    // victims for the rest. Deferred pages still waiting, and pages on their way out, count as
    // room to come: no victims are taken for them again.
    const std::size_t held = s.held_pages_nolock() - batch.candidates.size();
    const std::ptrdiff_t free =
        static_cast<std::ptrdiff_t>(s.budget_pages) - static_cast<std::ptrdiff_t>(held);
    const std::ptrdiff_t wanted = static_cast<std::ptrdiff_t>(batch.candidates.size());
    const auto to_come = static_cast<std::ptrdiff_t>(s.room_to_come_nolock());
    const std::ptrdiff_t ripe = static_cast<std::ptrdiff_t>(s.ripe_count_nolock());
    const std::ptrdiff_t needed = std::max<std::ptrdiff_t>(0, wanted - free - to_come);
    batch.defer_victims = s.defers();
    batch.victims = s.take_victims_nolock(
        static_cast<std::size_t>(needed),
        static_cast<std::size_t>(s.evict_ahead_nolock(wanted, needed, free, batch.defer_victims)),
        batch.rule);
    if (!batch.defer_victims) s.begin_reuse_at_once(batch.victims);
    const std::ptrdiff_t usable_victims =
        batch.defer_victims ? 0 : static_cast<std::ptrdiff_t>(batch.victims.size());
    const std::ptrdiff_t fits = std::clamp<std::ptrdiff_t>(free + ripe + usable_victims, 0, wanted);
    batch.recycled = s.take_ripe_nolock(static_cast<std::size_t>(std::min(ripe, fits)));
    // What does not fit goes back to the front of the queue, in order.
    while (static_cast<std::ptrdiff_t>(batch.candidates.size()) > fits) {
        PageIndex page = batch.candidates.back();
        batch.candidates.pop_back();
        s.entries.at(page).state = PageState::queued;
        --s.committing;
        ++s.queued;
        s.queue.push_front(page);
    }
    if (batch.candidates.empty() && batch.victims.empty()) return {};
    s.take_surplus_nolock(batch);
    return s.run_batch(lock, std::move(batch));
}

std::vector<PageMapping> PageTable::commit(std::span<const PageIndex> pages, bool pin) {
    return commit(pages, CommitOptions{.pin = pin});
}

std::vector<PageMapping> PageTable::commit(std::span<const PageIndex> pages,
                                           const CommitOptions& options) {
    const bool pin = options.pin;
    const FrameId asked_in = options.wanted_in;
    std::unique_lock lock(state_->mutex);
    State& s = *state_;
    for (PageIndex page : pages) s.check_page("commit", page);
    if (!options.precedence.empty() && options.precedence.size() != pages.size()) {
        throw Error(
            Errc::invalid_argument, "commit", "one precedence a page, or none",
            detail::concat("pages=", pages.size(), ", precedences=", options.precedence.size()));
    }
    std::unordered_map<PageIndex, std::uint32_t> precedence_of;
    for (std::size_t i = 0; i < options.precedence.size(); ++i) {
        std::uint32_t& precedence = precedence_of[pages[i]];
        precedence = std::max(precedence, options.precedence[i]);
    }
    std::vector<PageIndex> unique(pages.begin(), pages.end());
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    std::vector<PageIndex> resident_now;
    State::Batch batch;
    batch.pin = pin;
    batch.wanted_in = asked_in;
    for (PageIndex page : unique) {
        auto found = s.entries.find(page);
        if (found == s.entries.end() || found->second.state == PageState::queued) {
            continue;
        }
        if (found->second.state == PageState::resident) {
            resident_now.push_back(page);
        } else {
            throw Error(Errc::busy, "commit",
                        "the page is being committed or evicted by another thread",
                        page_text(page));
        }
    }
    std::size_t missing = unique.size() - resident_now.size();
    batch.rule = State::VictimRule::of(
        options, lowest_missing_precedence(unique, resident_now, precedence_of));
    const std::ptrdiff_t free = static_cast<std::ptrdiff_t>(s.budget_pages) -
                                static_cast<std::ptrdiff_t>(s.held_pages_nolock());
    const auto to_come = static_cast<std::ptrdiff_t>(s.room_to_come_nolock());
    const std::ptrdiff_t ripe = static_cast<std::ptrdiff_t>(s.ripe_count_nolock());
    // Pages already resident need no room, even over a lowered budget (evict_over_budget or
    // the next commits meet it): no victims for them, and no budget check.
    const std::ptrdiff_t needed =
        missing == 0 ? 0 : std::max<std::ptrdiff_t>(0, std::ptrdiff_t(missing) - free - to_come);
    batch.defer_victims = s.defers();
    if (missing > 0) {
        // The resident pages of this call must not be chosen as victims: pin them for the
        // choice.
        for (PageIndex page : resident_now) ++s.entries.at(page).pins;
        batch.victims =
            s.take_victims_nolock(static_cast<std::size_t>(needed),
                                  static_cast<std::size_t>(s.evict_ahead_nolock(
                                      std::ptrdiff_t(missing), needed, free, batch.defer_victims)),
                                  batch.rule);
        for (PageIndex page : resident_now) --s.entries.at(page).pins;
    }
    const std::ptrdiff_t room =
        free + ripe + (batch.defer_victims ? 0 : std::ptrdiff_t(batch.victims.size()));
    if (missing > 0 && static_cast<std::ptrdiff_t>(batch.victims.size()) >= needed &&
        room < std::ptrdiff_t(missing)) {
        // Room is coming from pages that frames in flight may still reach: evict what is
        // needed now (held back until those frames complete) and let the caller try again.
        const std::ptrdiff_t waiting = to_come + std::ptrdiff_t(batch.victims.size());
        if (!batch.victims.empty()) {
            State::Batch evictions;
            evictions.victims = std::move(batch.victims);
            evictions.defer_victims = true;
            s.run_batch(lock, std::move(evictions));
        }
        throw Error(Errc::budget_exhausted, "commit",
                    detail::concat(missing, " pages do not fit yet: ", waiting,
                                   " evicted pages are still being unmapped or wait for the "
                                   "frames in flight that may still sample them"),
                    detail::concat("pages=", unique.size()));
    }
    if (static_cast<std::ptrdiff_t>(batch.victims.size()) < needed) {
        for (const PageMapping& victim : batch.victims) s.restore_victim_nolock(victim);
        const std::size_t short_by = static_cast<std::size_t>(needed) - batch.victims.size();
        if (asked_in != 0 && s.older_fenced_nolock(short_by, batch.rule) < short_by) {
            // Waiting for frames would not free enough: the rest was wanted since.
            throw Error(Errc::superseded, "commit",
                        detail::concat(missing,
                                       " pages fit only by evicting pages wanted since "
                                       "frame ",
                                       asked_in, ", when they were asked for"),
                        detail::concat("pages=", unique.size()));
        }
        throw Error(
            Errc::budget_exhausted, "commit",
            detail::concat(missing, " pages do not fit: the budget holds ", s.budget_pages,
                           " pages, ", s.resident, " resident, and only ", batch.victims.size(),
                           " of them can be evicted (the rest are pinned or in use by "
                           "frames not yet complete)"),
            detail::concat("pages=", unique.size()));
    }
    batch.recycled = s.take_ripe_nolock(std::min<std::size_t>(std::size_t(ripe), missing));
    if (!batch.defer_victims) s.begin_reuse_at_once(batch.victims);
    for (PageIndex page : resident_now) {
        Entry& entry = s.entries.at(page);
        entry.last_used = s.current_frame;
        entry.wanted_in = std::max(entry.wanted_in, asked_in != 0 ? asked_in : s.current_frame);
        s.policy->accessed(page);
        if (pin && entry.pins++ == 0) ++s.pinned;
    }
    for (PageIndex page : unique) {
        auto [it, inserted] = s.entries.try_emplace(page);
        if (!inserted && it->second.state != PageState::queued) continue;
        if (!inserted) {
            --s.queued;
            it->second.was_queued = true;
        }
        it->second.state = PageState::committing;
        it->second.precedence = precedence_of.contains(page) ? precedence_of[page] : 0;
        ++s.committing;
        batch.candidates.push_back(page);
    }
    std::vector<PageMapping> result;
    if (!batch.candidates.empty() || !batch.victims.empty()) {
        s.take_surplus_nolock(batch);
        try {
            result = s.run_batch(lock, std::move(batch));
        } catch (...) {
            // The batch was undone; so are the pins this call gave the resident pages (pinned
            // pages stay resident, so they are all still there).
            lock.lock();
            if (pin) {
                for (PageIndex page : resident_now) {
                    Entry& entry = s.entries.at(page);
                    if (--entry.pins == 0) --s.pinned;
                }
            }
            throw;
        }
        lock.lock();
    }
    for (PageIndex page : resident_now) {
        const Entry& entry = s.entries.at(page);
        result.push_back({page, entry.physical, entry.generation});
    }
    return result;
}

void PageTable::pin(std::span<const PageIndex> pages) {
    std::lock_guard lock(state_->mutex);
    for (PageIndex page : pages) {
        state_->check_page("pin", page);
        auto found = state_->entries.find(page);
        if (found == state_->entries.end() || found->second.state != PageState::resident) {
            throw Error(Errc::not_mapped, "pin", "the page is not resident", page_text(page));
        }
    }
    for (PageIndex page : pages) {
        if (state_->entries.at(page).pins++ == 0) ++state_->pinned;
    }
}

void PageTable::unpin(std::span<const PageIndex> pages) {
    std::lock_guard lock(state_->mutex);
    std::unordered_map<PageIndex, std::uint32_t> counts;
    for (PageIndex page : pages) {
        state_->check_page("unpin", page);
        auto found = state_->entries.find(page);
        if (found == state_->entries.end() || found->second.pins < ++counts[page]) {
            throw Error(Errc::invalid_argument, "unpin", "the page is not pinned", page_text(page));
        }
    }
    for (PageIndex page : pages) {
        if (--state_->entries.at(page).pins == 0) --state_->pinned;
    }
}

void PageTable::evict(std::span<const PageIndex> pages) {
    std::unique_lock lock(state_->mutex);
    State& s = *state_;
    std::unordered_set<PageIndex> seen;
    for (PageIndex page : pages) {
        s.check_page("evict", page);
        auto found = s.entries.find(page);
        if (found == s.entries.end() || found->second.state != PageState::resident ||
            !seen.insert(page).second) {
            throw Error(Errc::not_mapped, "evict", "the page is not resident", page_text(page));
        }
        if (found->second.pins > 0) {
            throw Error(Errc::busy, "evict", "the page is pinned", page_text(page));
        }
        if (found->second.last_used > s.completed_frame) {
            throw Error(
                Errc::busy, "evict",
                detail::concat("the page is in use by frame ", found->second.last_used,
                               ", which is not complete (completed: ", s.completed_frame, ")"),
                page_text(page));
        }
    }
    std::vector<PageMapping> victims;
    for (PageIndex page : pages) victims.push_back(s.mark_evicting_nolock(page));
    std::exception_ptr failure;
    s.evict_marked(lock, victims, failure);
    if (failure) std::rethrow_exception(failure);
}

void PageTable::protect(std::span<const PageIndex> pages, Access access) {
    std::lock_guard lock(state_->mutex);
    for (PageIndex page : pages) {
        state_->check_page("protect", page);
        auto found = state_->entries.find(page);
        if (found == state_->entries.end() || found->second.state != PageState::resident) {
            throw Error(Errc::not_mapped, "protect", "the page is not resident", page_text(page));
        }
    }
    if (!state_->settings.map_into_region) {
        throw Error(Errc::not_supported, "protect", "the table does not map pages into its region",
                    "");
    }
    // Under the lock, so that no eviction races the access change.
    state_->region.protect(pages, access);
}

bool PageTable::maps_into_region() const noexcept { return state_->settings.map_into_region; }

DeviceAddress PageTable::data_address(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    state_->check_page("data_address", page);
    auto found = state_->entries.find(page);
    if (found == state_->entries.end() || found->second.state != PageState::resident) {
        throw Error(Errc::not_mapped, "data_address", "the page is not resident", page_text(page));
    }
    if (state_->settings.map_into_region) return state_->region.address_of(page);
    if (found->second.physical.window == 0) {
        throw Error(Errc::not_supported, "data_address",
                    "the table does not map into its region and the pool maps no windows",
                    page_text(page));
    }
    return found->second.physical.window;
}

bool PageTable::is_resident(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    state_->check_page("is_resident", page);
    auto found = state_->entries.find(page);
    return found != state_->entries.end() && found->second.state == PageState::resident;
}

std::optional<PageMapping> PageTable::lookup(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    state_->check_page("lookup", page);
    auto found = state_->entries.find(page);
    if (found == state_->entries.end() || found->second.state != PageState::resident) {
        return std::nullopt;
    }
    return PageMapping{page, found->second.physical, found->second.generation};
}

std::size_t PageTable::resident_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->resident;
}

PageTableStatistics PageTable::statistics() const {
    PageTableStatistics result;
    {
        std::lock_guard lock(state_->mutex);
        const State& s = *state_;
        result.page_size = s.region.page_size();
        result.budget_pages = s.budget_pages;
        result.resident_pages = s.resident;
        result.pinned_pages = s.pinned;
        result.queued_pages = s.queued;
        result.current_frame = s.current_frame;
        result.completed_frame = s.completed_frame;
        result.requests = s.requests;
        result.hits = s.hits;
        result.commits = s.commits;
        result.evictions = s.evictions;
        result.commit_batches = s.batches;
        result.out_of_memory_retries = s.out_of_memory_retries;
        result.failed_batches = s.failed_batches;
        result.over_budget_evictions = s.over_budget_evictions;
        result.deferred_pages = s.deferred.size();
        result.deferred_peak = s.deferred_peak;
        result.deferred_total = s.deferred_total;
        result.deferred_reused = s.deferred_reused;
    }
    result.commit_latency = state_->commit_latency.summary();
    result.evict_latency = state_->evict_latency.summary();
    result.region = state_->region.statistics();
    result.pool = state_->pool.statistics();
    return result;
}

void PageTable::check_invariants() const {
    std::lock_guard lock(state_->mutex);
    const State& s = *state_;
    auto fail = [](const std::string& what) {
        throw Error(Errc::corrupt_data, "check_invariants", what);
    };
    std::size_t resident = 0, queued = 0, committing = 0, evicting = 0, pinned = 0;
    std::unordered_set<std::uint32_t> slots;
    std::unordered_set<std::uint64_t> handles;
    for (const auto& [page, entry] : s.entries) {
        switch (entry.state) {
            case PageState::resident: {
                ++resident;
                PhysicalHandle mapped =
                    s.settings.map_into_region ? s.region.handle_at(page) : entry.physical.handle;
                if (mapped != entry.physical.handle) {
                    fail(detail::concat("resident page ", page, " maps handle ", mapped.value,
                                        ", the table says ", entry.physical.handle.value));
                }
                if (!slots.insert(entry.physical.slot).second ||
                    !handles.insert(entry.physical.handle.value).second) {
                    fail(detail::concat("the physical page of page ", page,
                                        " backs another page too"));
                }
                break;
            }
            case PageState::queued:
                ++queued;
                if (s.region.is_committed(page)) {
                    fail(detail::concat("queued page ", page, " is mapped"));
                }
                break;
            case PageState::committing:
                ++committing;
                break;
            case PageState::evicting:
                ++evicting;
                break;
        }
        if (entry.pins > 0) ++pinned;
        if (entry.pins > 0 && entry.state != PageState::resident) {
            fail(detail::concat("page ", page, " is pinned but not resident"));
        }
    }
    s.deferred.for_each([&](const PooledPage& physical, FrameId) {
        if (!slots.insert(physical.slot).second || !handles.insert(physical.handle.value).second) {
            fail(detail::concat("a held-back physical page (slot ", physical.slot,
                                ") backs a page too"));
        }
    });
    if (resident != s.resident || queued != s.queued || committing != s.committing ||
        evicting != s.evicting || pinned != s.pinned) {
        fail(detail::concat("counts disagree: resident ", resident, "/", s.resident, ", queued ",
                            queued, "/", s.queued, ", committing ", committing, "/", s.committing,
                            ", evicting ", evicting, "/", s.evicting, ", pinned ", pinned, "/",
                            s.pinned));
    }
    if (committing == 0 && evicting == 0 && s.in_transit_nolock() == 0) {
        const std::size_t mapped = s.settings.map_into_region ? resident : 0;
        if (s.region.committed_count() != mapped) {
            fail(detail::concat("the region has ", s.region.committed_count(),
                                " pages committed, the table expects ", mapped));
        }
        const auto pool = s.pool.statistics();
        if (pool.used_bytes != (resident + s.deferred.size()) * s.region.page_size()) {
            fail(detail::concat("the pool has ", pool.used_bytes / s.region.page_size(),
                                " pages in use, the table ", resident, " resident and ",
                                s.deferred.size(), " held back"));
        }
    }
    std::size_t live_queue = 0;
    std::unordered_set<PageIndex> in_queue;
    for (PageIndex page : s.queue) {
        auto found = s.entries.find(page);
        if (found != s.entries.end() && found->second.state == PageState::queued &&
            in_queue.insert(page).second) {
            ++live_queue;
        }
    }
    if (live_queue != s.queued) {
        fail(detail::concat("the queue holds ", live_queue, " live pages, the count says ",
                            s.queued));
    }
    s.pool.check_invariants();
}

LiveResources PageTable::held_resources() const {
    LiveResources held = state_->region.held_resources();
    const LiveResources pool = state_->pool.held_resources();
    held.reservations += pool.reservations;
    held.reserved_bytes += pool.reserved_bytes;
    held.mappings += pool.mappings;
    held.mapped_bytes += pool.mapped_bytes;
    held.pages += pool.pages;
    held.page_bytes += pool.page_bytes;
    return held;
}

void PageTable::check_invariants(const LiveResources& backend_baseline) const {
    check_invariants();
    {
        std::lock_guard lock(state_->mutex);
        if (state_->committing > 0 || state_->evicting > 0 || state_->in_transit_nolock() > 0) {
            throw Error(Errc::busy, "check_invariants",
                        "commits or evictions are in progress: the backend cannot be compared");
        }
    }
    const LiveResources held = held_resources();
    LiveResources expected = backend_baseline;
    expected.reservations += held.reservations;
    expected.reserved_bytes += held.reserved_bytes;
    expected.mappings += held.mappings;
    expected.mapped_bytes += held.mapped_bytes;
    expected.pages += held.pages;
    expected.page_bytes += held.page_bytes;
    const LiveResources actual = state_->backend.live_resources();
    if (!(actual == expected)) {
        throw Error(
            Errc::corrupt_data, "check_invariants",
            detail::concat("the backend holds ", actual.reservations, " reservations, ",
                           actual.mappings, " mappings, ", actual.pages,
                           " pages; the table accounts for ", expected.reservations, ", ",
                           expected.mappings, ", ", expected.pages, " (baseline included)"));
    }
}

void PageTable::shutdown() {
    std::unique_lock lock(state_->mutex);
    State& s = *state_;
    if (s.pinned > 0) {
        throw Error(Errc::busy, "shutdown", detail::concat(s.pinned, " pages are still pinned"));
    }
    if (s.committing > 0 || s.evicting > 0) {
        throw Error(Errc::busy, "shutdown", "commits or evictions are in progress");
    }
    // A frame in flight may still read a held-back page through its old mapping.
    if (const auto waiting = s.deferred.waiting(s.completed_frame); waiting.count > 0) {
        const FrameId first = waiting.first, last = waiting.last;
        throw Error(Errc::busy, "shutdown",
                    detail::concat(waiting.count, " evicted pages are held back for ",
                                   first == last ? detail::concat("frame ", first, ", which is")
                                                 : detail::concat("frames ", first, " to ", last,
                                                                  ", which are"),
                                   " not complete (completed: ", s.completed_frame, ")"));
    }
    std::vector<PageIndex> resident_pages;
    for (const auto& [page, entry] : s.entries) {
        if (entry.state != PageState::resident) continue;
        if (entry.last_used > s.completed_frame) {
            throw Error(Errc::busy, "shutdown",
                        detail::concat("page ", page, " is in use by frame ", entry.last_used,
                                       ", which is not complete"));
        }
        resident_pages.push_back(page);
    }
    std::vector<PageMapping> victims;
    victims.reserve(resident_pages.size());
    for (PageIndex page : resident_pages) victims.push_back(s.mark_evicting_nolock(page));
    // Queued pages are dropped.
    for (auto it = s.entries.begin(); it != s.entries.end();) {
        it = it->second.state == PageState::queued ? s.entries.erase(it) : std::next(it);
    }
    s.queue.clear();
    s.queued = 0;
    // Every frame is complete: the held-back pages go back to the pool with the others.
    std::vector<PooledPage> held_back = s.deferred.take_all();
    s.returning += held_back.size();
    s.leaving += victims.size();
    lock.unlock();
    s.release_to_pool(held_back);
    std::exception_ptr failure;
    s.release_to_pool(s.evict_victims(lock, victims, failure, false));
    s.pool.trim_to(0);
    if (failure) std::rethrow_exception(failure);
}

PageTableSettings with_window_pages(Backend& backend, PageTableSettings settings) {
    PagePoolSettings& pool = settings.pool;
    if (!pool.map_windows || pool.window_pages != 0) return settings;
    const std::size_t page = backend.granularity(pool.page_options).minimum;
    if (page == 0) return settings;  // the pool's own default then
    const std::size_t budget = std::max<std::size_t>(1, settings.budget_bytes / page);
    const std::size_t device = backend.memory_info().total / page;
    pool.window_pages = std::max(budget, std::min(device, PagePoolSettings::default_window_pages));
    return settings;
}

}  // namespace vtpage
