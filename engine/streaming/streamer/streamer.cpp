#include "vtpage/streaming/streamer/streamer.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/ordered_delivery.hpp"
#include "base/ranked_mutex.hpp"
#include "base/test_points.hpp"
#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/level_placement.hpp"
#include "streaming/streamer/packed_level_pool.hpp"
#include "streaming/streamer/page_loader.hpp"
#include "streaming/streamer/pending_queue.hpp"
#include "streaming/streamer/pinned_tally.hpp"
#include "streaming/streamer/stored_page_route.hpp"
#include "streaming/streamer/streamer_events.hpp"
#include "streaming/streamer/tail_placement.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"

namespace vtpage::vt {

using streamer_detail::BatchItem;
using streamer_detail::BatchRoute;
using streamer_detail::BatchState;
using streamer_detail::fill_page_on_host;
using streamer_detail::level_page_cap;
using streamer_detail::LevelPlacement;
using streamer_detail::PendingKey;
using streamer_detail::PendingQueue;
using streamer_detail::PinnedTally;
using streamer_detail::PlacedLevel;
using streamer_detail::StoredPageRoute;
using streamer_detail::StreamerEvents;
using streamer_detail::TailPlacement;

PageTableSettings recommended_table_settings() {
    PageTableSettings settings;
    settings.region_size = 16_TiB;
    settings.budget_bytes = 1_GiB;
    settings.map_into_region = false;
    settings.pool.map_windows = true;
    settings.evict_ahead_pages = 64;
    return settings;
}

namespace {

using Clock = std::chrono::steady_clock;

// Pages whose fills were enqueued with on_fills_enqueued: unpinned once the batch finished.
struct AsyncBatch {
    std::uint64_t ticket = 0;
    std::vector<PageIndex> pinned;
};

}  // namespace

struct Streamer::State {
    State(Backend& b, StreamerSettings s) : backend(b), settings(std::move(s)) {}

    Backend& backend;
    StreamerSettings settings;
    bool gpu = false;
    int device = 0;
    std::unique_ptr<TextureSet> textures;
    std::unique_ptr<PageTable> table;

    // Guards what follows, up to the event members.
    mutable detail::RankedMutex mutex{detail::LockRank::streamer_state, "streamer state"};
    std::condition_variable_any work_cv;
    std::condition_variable_any idle_cv;
    PendingQueue pending{settings.max_pending};
    std::unordered_set<PageIndex> in_flight;
    // Pages requested again while in flight: their batch marks them used by the frame current
    // when it finishes, or a frame that asked for a page committed frames earlier could see it
    // evicted as soon as it is ready, its request lost.
    std::unordered_set<PageIndex> asked_in_flight;
    std::size_t reporting = 0;  // batches between leaving in_flight and their ready events
    std::unordered_map<PageIndex, StreamedPage> ready;
    std::vector<PageIndex> tails;  // pinned tail pages
    std::size_t packed_tails = 0;  // ready tails that live in another's page
    std::uint64_t wake_epoch = 0;  // raised when frames complete or pins are released
    bool stopping = false;
    std::deque<std::exception_ptr> errors;
    StreamerStatistics stats;

    // Tickets for changes to the members above are taken under `mutex`.
    StreamerEvents events{settings};

    // Mip tails: placed (packed or a page each) and filled when a texture is added.
    std::unique_ptr<TailPlacement> tail_placement;
    // What the textures added so far pin; guarded by tail_placement's add lock.
    PinnedTally pinned{settings.pack_tails, settings.pack_levels};
    // Packed coarse levels (settings.pack_levels): pages past the textures' (from host_base on,
    // host_names of them) hold them.
    std::unique_ptr<LevelPlacement> placement;
    PageIndex host_base = 0;
    std::size_t host_names = 0;
    std::vector<std::thread> workers;
    // Pages stored in files go through the loader once committed (settings.file_reads).
    std::unique_ptr<StoredPageRoute> stored;

    // ---- events ----
    using Ticket = StreamerEvents::Ticket;
    void emit(Ticket& ticket, StreamerEventKind kind, std::span<const StreamedPage> pages) {
        events.emit(ticket, kind, pages);
    }

    StreamedPage describe(const PageMapping& mapping) const {
        StreamedPage page;
        page.page = mapping.page;
        page.physical = mapping.physical;
        page.generation = mapping.generation;
        page.data =
            table->maps_into_region() ? table->address_of(mapping.page) : mapping.physical.window;
        page.table_page = mapping.page;
        if (auto owner = textures->find(mapping.page)) {
            page.texture = owner->texture;
            page.layout_page = owner->layout_page;
            page.mip = owner->position.mip;
        }
        return page;
    }

    // The streamer's own pages for packed levels (LevelPlacement::is_host) have no events.

    void on_committed(std::span<const PageMapping> mappings) {
        if (!events.accepting()) return;
        std::vector<StreamedPage> pages;
        pages.reserve(mappings.size());
        for (const PageMapping& mapping : mappings) {
            if (!placement->is_host(mapping.page)) pages.push_back(describe(mapping));
        }
        // In the page table's report order: a page's commit is reported before it is filled.
        Ticket ticket = events.take();
        emit(ticket, StreamerEventKind::committed, pages);
    }

    void on_evicted(std::span<const PageMapping> mappings) {
        std::vector<StreamedPage> pages;
        pages.reserve(mappings.size());
        Ticket ticket;
        {
            std::lock_guard lock(mutex);
            for (const PageMapping& mapping : mappings) {
                if (placement->is_host(mapping.page)) {
                    ++stats.released_level_pages;
                    continue;
                }
                auto found = ready.find(mapping.page);
                if (found != ready.end() && found->second.generation == mapping.generation) {
                    ready.erase(found);
                }
            }
            ticket = events.take();
        }
        if (!events.accepting()) return;
        for (const PageMapping& mapping : mappings) {
            if (!placement->is_host(mapping.page)) pages.push_back(describe(mapping));
        }
        emit(ticket, StreamerEventKind::evicted, pages);
    }

    // ---- packed coarse levels ----
    // LevelPlacement's hook: under mutex, the levels `evict` picks leave the pool and `ready`
    // together (a request sees a level placed and ready, or gone); their events, the ticket taken.
    std::vector<StreamedPage> evict_and_unready_levels(
        const std::function<std::vector<PageIndex>()>& evict, Ticket& ticket) {
        std::vector<StreamedPage> victims;
        std::lock_guard lock(mutex);
        for (PageIndex level : evict()) {
            auto found = ready.find(level);
            if (found == ready.end()) continue;
            victims.push_back(found->second);
            ready.erase(found);
        }
        ticket = events.take();
        return victims;
    }

    // Takes the keys of packable coarse levels out of `keys` and places them; returns their
    // items (described as packed pages) and puts back in pending those that found no place.
    std::vector<BatchItem> place_levels(std::vector<PendingKey>& keys) {
        std::vector<BatchItem> items;
        if (!placement->enabled()) return items;
        std::vector<PendingKey> rest, no_place;
        const LevelPlacement::PlacementLock placing = placement->lock_placement();
        if (placement->retiring()) placement->shrink(placing);
        for (const PendingKey& key : keys) {
            const std::optional<PageOwner> owner = textures->find(key.page);
            const std::optional<LevelShape> shape =
                owner ? PackedLevelPool::packable(textures->layout(owner->texture),
                                                  owner->position.mip)
                      : std::nullopt;
            if (!shape) {
                rest.push_back(key);
                continue;
            }
            const std::optional<PlacedLevel> placed = placement->place(placing, key.page, *shape);
            if (!placed) {
                // A shape that found no room for a page of its own (the budget's share is
                // taken by other shapes) is streamed a page a level.
                (placement->has_host(*shape) ? no_place : rest).push_back(key);
                continue;
            }
            const std::optional<LevelPlace> place = placed->place;
            StreamedPage page = placed->host;
            BatchItem item;
            item.key = key;
            item.owner = *owner;
            item.source = textures->source(owner->texture);
            item.route = BatchRoute::packed_level;
            item.place = place;
            item.mapping = {key.page, page.physical, page.generation};
            page.page = key.page;
            page.texture = owner->texture;
            page.layout_page = owner->layout_page;
            page.mip = owner->position.mip;
            page.data += place->offset;
            page.offset = place->offset;
            page.bytes = place->bytes;
            page.fence = 0;
            item.page = page;
            items.push_back(std::move(item));
        }
        keys = std::move(rest);
        if (!no_place.empty()) {
            std::lock_guard lock(mutex);
            requeue_nolock(no_place);
        }
        return items;
    }

    // A packed level filled by its source on the host: the page in staging, then its rows.
    void fill_level(BatchItem& item) {
        std::vector<std::byte> staging(page_bytes);
        item.source->fill_host(item.owner.layout_page, staging);
        item.place->rows.for_each([&](std::uint64_t offset, std::uint64_t bytes) {
            backend.write(item.page.data + offset, staging.data() + offset, bytes);
        });
    }

    // Pages of packed levels pinned at least, for a budget of `budget_pages`.
    std::size_t level_cap(std::size_t budget_pages) const {
        if (!settings.pack_levels) return 0;
        return std::min(level_page_cap(settings.packed_level_pages, budget_pages), host_names);
    }
    // Refuses a texture whose tail and coarse levels would pin more pages than the budget has.
    void check_pinned_fit_nolock(const TailPlacement::AddLock&, const TileSource& source) const {
        if (!source.shape().valid()) return;  // TextureSet::add says what is wrong with it
        const std::size_t budget = table->budget_pages();
        const PinnedPages after = pinned.with(TextureLayout(source.shape()), level_cap(budget));
        if (after.total() <= budget) return;
        throw Error(Errc::budget_exhausted, "Streamer::add_texture",
                    detail::concat("with this texture the textures would pin ", after.total(),
                                   " pages (", after.tail_pages, " of mip tails, ",
                                   after.level_pages, " of packed coarse levels) and the budget ",
                                   "holds ", budget, "; raise the budget or add fewer textures"),
                    detail::concat("pinned_pages=", after.total(), ", budget_pages=", budget,
                                   ", source=", source.name()));
    }

    // ---- errors ----
    void record_error(const std::exception_ptr& error) {
        {
            std::lock_guard lock(mutex);
            ++stats.errors;
            if (errors.size() < 64) errors.push_back(error);
        }
        try {
            std::rethrow_exception(error);
        } catch (const Error& e) {
            settings.log.error("streamer: ", e.what());
            if (settings.on_error) {
                try {
                    settings.on_error(e);
                } catch (const std::exception& thrown) {
                    settings.log.error("streamer: on_error threw: ", thrown.what());
                }
            }
        } catch (const std::exception& e) {
            settings.log.error("streamer: ", e.what());
            if (settings.on_error) {
                try {
                    settings.on_error(Error(Errc::backend_failure, "Streamer", e.what()));
                } catch (const std::exception& thrown) {
                    settings.log.error("streamer: on_error threw: ", thrown.what());
                }
            }
        } catch (...) {
            settings.log.error("streamer: a worker failed with an unknown exception");
        }
    }

    // ---- pending requests ----
    // Back to pending after a batch could not take them (their priority kept).
    void requeue_nolock(std::span<const PendingKey> keys) {
        for (const PendingKey& key : keys) {
            in_flight.erase(key.page);
            asked_in_flight.erase(key.page);
        }
        pending.put_back(keys);
    }
    bool idle() const { return pending.empty() && in_flight.empty() && reporting == 0; }
    void notify_if_idle() {
        if (idle()) idle_cv.notify_all();
    }

    // ---- fills ----
    void fill_on_host(BatchItem& item) {
        fill_page_on_host(backend, gpu, *item.source, item.owner.layout_page, item.page.data);
    }

    // After a device fill of several pages failed: one page that cannot be read (a damaged
    // page of a file) fails the call for all of them, so each is filled again on its own and
    // only those that fail again are marked failed, each error recorded. A page the failed
    // call had enqueued already is copied twice, with the same bytes. True when any was
    // enqueued.
    bool fill_device_one_by_one(const TileSource& source, const std::vector<DevicePageFill>& fills,
                                const std::vector<BatchItem*>& group, DeviceFillContext& context,
                                const std::exception_ptr& group_error) {
        if (fills.size() == 1) {
            group.front()->state = BatchState::failed;
            record_error(group_error);
            return false;
        }
        bool enqueued = false;
        for (std::size_t i = 0; i < fills.size(); ++i) {
            try {
                source.fill_device(std::span(&fills[i], 1), context);
                enqueued = true;
            } catch (...) {
                group[i]->state = BatchState::failed;
                record_error(std::current_exception());
            }
        }
        return enqueued;
    }

    // Fills the items; marks those that failed. Returns the fence of the device fills (0 when
    // waited for) and, in `async_ticket`, the batch to wait for before unpinning device pages.
    std::uint64_t fill(std::vector<BatchItem>& items, DeviceFillContext* context,
                       std::uint64_t& async_ticket) {
        async_ticket = 0;
        std::map<const TileSource*, std::vector<BatchItem*>> device_groups;
        for (BatchItem& item : items) {
            if (item.route == BatchRoute::host_fill && context && item.source->fills_device()) {
                item.route = BatchRoute::device_fill;
                item.state = BatchState::filling;
                device_groups[item.source.get()].push_back(&item);
                continue;
            }
            try {
                if (item.route == BatchRoute::packed_level) {
                    fill_level(item);
                } else {
                    fill_on_host(item);
                }
                item.state = BatchState::filled;
            } catch (...) {
                item.state = BatchState::failed;
                record_error(std::current_exception());
            }
        }
        if (device_groups.empty()) return 0;
        // Enqueued fills count as filled (their fence says when) unless they failed.
        struct MarkFilled {
            decltype(device_groups)& groups;
            ~MarkFilled() {
                for (auto& [source, group] : groups) {
                    for (BatchItem* item : group) {
                        if (!item->failed()) item->state = BatchState::filled;
                    }
                }
            }
        } mark_filled{device_groups};
        std::uint64_t fence = 0;
        try {
            context->begin_batch();
        } catch (...) {
            for (auto& [source, group] : device_groups) {
                for (BatchItem* item : group) item->state = BatchState::failed;
            }
            record_error(std::current_exception());
            return 0;
        }
        bool enqueued = false;
        for (auto& [source, group] : device_groups) {
            std::vector<DevicePageFill> fills;
            fills.reserve(group.size());
            for (BatchItem* item : group)
                fills.push_back({item->owner.layout_page, item->page.data});
            try {
                source->fill_device(fills, *context);
                enqueued = true;
            } catch (...) {
                enqueued |= fill_device_one_by_one(*source, fills, group, *context,
                                                   std::current_exception());
            }
        }
        bool waited = true;
        if (enqueued && settings.on_fills_enqueued) {
            try {
                fence = settings.on_fills_enqueued(context->stream());
                waited = false;
            } catch (...) {
                record_error(std::current_exception());
            }
        }
        try {
            const std::uint64_t ticket = context->end_batch();
            if (waited) {
                context->wait(ticket);
            } else {
                async_ticket = ticket;
            }
        } catch (...) {
            for (auto& [source, group] : device_groups) {
                for (BatchItem* item : group) item->state = BatchState::failed;
            }
            record_error(std::current_exception());
            async_ticket = 0;
            // Failed pages are unpinned and reused at once: nothing enqueued for them may run on.
            try {
                if (!VTPAGE_TEST_SWITCH("defect.failed_device_batch_not_waited")) {
                    context->synchronize();
                }
            } catch (...) {
                record_error(std::current_exception());
            }
        }
        return waited ? 0 : fence;
    }

    void unpin(std::span<const PageIndex> pages) {
        if (pages.empty()) return;
        try {
            table->unpin(pages);
        } catch (...) {
            record_error(std::current_exception());
        }
        {
            std::lock_guard lock(mutex);
            ++wake_epoch;
        }
        work_cv.notify_all();
    }

    enum class CommitOutcome { committed, stalled, failed };

    // Commits the keys' pages pinned, keeping the higher-priority half when the budget has no
    // room for all (the rest go back to pending, as do all of them on a stall).
    CommitOutcome commit_pages(std::vector<PendingKey>& keys, std::vector<PageMapping>& mappings) {
        while (true) {
            std::vector<PageIndex> pages;
            pages.reserve(keys.size());
            for (const PendingKey& key : keys) pages.push_back(key.page);
            try {
                mappings = table->commit(pages, true);
                return CommitOutcome::committed;
            } catch (const Error& error) {
                const bool no_room = error.code() == Errc::budget_exhausted;
                if (no_room && keys.size() > 1) {
                    // Keep the higher-priority half and try again.
                    const std::size_t keep = keys.size() / 2;
                    std::lock_guard lock(mutex);
                    requeue_nolock(std::span(keys).subspan(keep));
                    keys.resize(keep);
                    continue;
                }
                if (no_room || error.code() == Errc::busy) {
                    std::lock_guard lock(mutex);
                    requeue_nolock(keys);
                    ++stats.budget_stalls;
                    return CommitOutcome::stalled;
                }
                {
                    std::lock_guard lock(mutex);
                    for (const PendingKey& key : keys) {
                        in_flight.erase(key.page);
                        asked_in_flight.erase(key.page);
                    }
                    stats.failed_pages += keys.size();
                    notify_if_idle();
                }
                record_error(std::current_exception());
                return CommitOutcome::failed;
            }
        }
    }

    // Commits (or places, for packed levels), fills and reports one batch. Returns false when
    // nothing fitted the budget.
    bool run_batch(std::vector<PendingKey> keys, DeviceFillContext* context,
                   std::deque<AsyncBatch>& async) {
        const auto commit_start = Clock::now();
        // One recorder for the whole batch (none if none is installed as it begins).
        TraceRecorder* const trace = trace::active();
        const std::int64_t trace_commit_start = trace ? trace->now() : 0;
        std::vector<BatchItem> items = place_levels(keys);
        std::vector<PageMapping> mappings;
        if (!keys.empty()) {
            const CommitOutcome outcome = commit_pages(keys, mappings);
            if (outcome != CommitOutcome::committed && items.empty()) {
                return outcome == CommitOutcome::failed;
            }
        } else if (items.empty()) {
            std::lock_guard lock(mutex);
            ++stats.budget_stalls;
            return false;  // no packed level found a place
        }
        const auto fill_start = Clock::now();
        const std::int64_t trace_fill_start = trace ? trace->now() : 0;
        if (trace) {
            // One commit call for the batch (and one placement of its packed levels): each
            // page's commit is the batch's.
            const std::size_t count = mappings.size() + items.size();
            for (const BatchItem& item : items) {
                trace->complete("page", "commit", trace_commit_start, trace_fill_start,
                                {.page = item.mapping.page, .count = count});
            }
            for (const PageMapping& mapping : mappings) {
                trace->complete("page", "commit", trace_commit_start, trace_fill_start,
                                {.page = mapping.page, .count = count});
            }
        }

        std::unordered_map<PageIndex, PendingKey> key_of;
        for (const PendingKey& key : keys) key_of[key.page] = key;
        items.reserve(items.size() + mappings.size());
        for (const PageMapping& mapping : mappings) {
            BatchItem item;
            item.key = key_of[mapping.page];
            item.mapping = mapping;
            item.page = describe(mapping);
            auto owner = textures->find(mapping.page);
            item.owner = owner.value_or(PageOwner{});
            item.source = textures->source(item.owner.texture);
            items.push_back(std::move(item));
        }
        if (stored->started()) items = stored->load(std::move(items));
        std::uint64_t async_ticket = 0;
        const std::uint64_t fence = items.empty() ? 0 : fill(items, context, async_ticket);
        const auto done = Clock::now();
        if (trace) {
            // Filled by this worker (the stored pages went to the loader): the batch's fill.
            const std::int64_t trace_done = trace->now();
            for (const BatchItem& item : items) {
                trace->complete("page", "fill", trace_fill_start, trace_done,
                                {.page = item.mapping.page, .count = items.size()});
            }
        }

        {
            std::lock_guard lock(mutex);
            ++stats.batches;
            stats.commit_seconds +=
                std::chrono::duration<double>(fill_start - commit_start).count();
            stats.fill_seconds += std::chrono::duration<double>(done - fill_start).count();
        }
        std::vector<PageIndex> unpin_later = finish_items(items, fence, async_ticket != 0);
        if (!unpin_later.empty()) async.push_back({async_ticket, std::move(unpin_later)});
        return true;
    }

    // Reports filled items ready and counts the failed ones, then unpins them -- except device
    // pages whose fills still run (fence_pending): those are returned, to be unpinned once the
    // fills have finished.
    std::vector<PageIndex> finish_items(std::span<BatchItem> items, std::uint64_t fence,
                                        bool fence_pending) {
        std::vector<StreamedPage> ready_pages;
        std::vector<PageIndex> unpin_now, unpin_later, asked_again, filled_levels;
        const FrameId frame = table->current_frame();
        // The defect switch takes the ready ticket only once the pages are evictable, so that
        // an eviction can be reported before the ready it follows.
        const bool late_ticket = VTPAGE_TEST_SWITCH("defect.ready_reported_after_pages_evictable");
        Ticket ticket;
        {
            std::lock_guard lock(mutex);
            for (BatchItem& item : items) {
                in_flight.erase(item.mapping.page);
                const bool asked = asked_in_flight.erase(item.mapping.page) != 0;
                if (item.place) {
                    // Its host stays pinned; the level is kept for the frame current now.
                    if (item.failed()) {
                        ++stats.failed_pages;
                        placement->release(item.mapping.page);
                        continue;
                    }
                    filled_levels.push_back(item.mapping.page);
                    ready[item.mapping.page] = item.page;
                    ready_pages.push_back(item.page);
                    continue;
                }
                if (asked && !item.failed()) asked_again.push_back(item.mapping.page);
                if (item.failed()) {
                    ++stats.failed_pages;
                    // A failed call of a batch may have enqueued work into the page before it
                    // failed: the page waits for the batch like its filled neighbours.
                    (item.on_device() && fence_pending ? unpin_later : unpin_now)
                        .push_back(item.mapping.page);
                    continue;
                }
                if (item.on_device() && fence_pending) {
                    item.page.fence = fence;
                    unpin_later.push_back(item.mapping.page);
                } else {
                    unpin_now.push_back(item.mapping.page);
                }
                ready[item.mapping.page] = item.page;
                ready_pages.push_back(item.page);
            }
            stats.pages_filled += ready_pages.size();
            for (const StreamedPage& page : ready_pages) stats.bytes_filled += page.bytes;
            ++reporting;
            if (!late_ticket) ticket = events.take();
        }
        // Ready is reported while the pages are still pinned, and before the packed levels are
        // evictable: no eviction, nor another level in the same place, can be reported first.
        if (!late_ticket) emit(ticket, StreamerEventKind::ready, ready_pages);
        // Still pinned: the frame that asked again now holds them until it completes.
        if (!asked_again.empty()) {
            try {
                table->request(asked_again);
            } catch (...) {
                record_error(std::current_exception());
            }
        }
        unpin(unpin_now);
        {
            std::lock_guard lock(mutex);
            for (PageIndex level : filled_levels) placement->filled(level, frame);
            if (!late_ticket) {
                --reporting;
                notify_if_idle();
                return unpin_later;
            }
        }
        {
            std::lock_guard lock(mutex);
            ticket = events.take();
        }
        emit(ticket, StreamerEventKind::ready, ready_pages);
        std::lock_guard lock(mutex);
        --reporting;
        notify_if_idle();
        return unpin_later;
    }

    // Unpins the pages of async batches that have finished (all of them when `wait`).
    void release_finished(DeviceFillContext* context, std::deque<AsyncBatch>& async, bool wait) {
        while (!async.empty()) {
            AsyncBatch& front = async.front();
            try {
                if (wait) {
                    context->wait(front.ticket);
                } else if (!context->finished(front.ticket)) {
                    return;
                }
            } catch (...) {
                record_error(std::current_exception());
            }
            unpin(front.pinned);
            async.pop_front();
        }
    }

    void worker_main(std::size_t index) {
        trace::name_thread("vtpage worker " + std::to_string(index));
        std::unique_ptr<DeviceFillContext> context;
        if (gpu) {
            try {
                context = std::make_unique<DeviceFillContext>(device);
            } catch (...) {
                record_error(std::current_exception());  // fills go through host memory
            }
        }
        std::deque<AsyncBatch> async;
        bool stalled = false;
        std::uint64_t stall_epoch = 0;
        Clock::time_point stall_time{};
        constexpr auto stall_retry = std::chrono::milliseconds(2);
        constexpr auto async_poll = std::chrono::microseconds(500);
        constexpr auto loader_poll = std::chrono::milliseconds(2);
        while (true) {
            if (context) release_finished(context.get(), async, false);
            std::vector<PendingKey> keys;
            {
                std::unique_lock lock(mutex);
                while (true) {
                    if (stopping) break;
                    const bool may_retry = !stalled || wake_epoch != stall_epoch ||
                                           Clock::now() - stall_time >= stall_retry;
                    const bool room = stored->room() > 0;
                    if (!pending.empty() && may_retry && room) break;
                    if (!async.empty()) {
                        work_cv.wait_for(lock, async_poll);
                        break;  // release finished batches, then look again
                    }
                    if (!pending.empty() && !room) {
                        // The loader's read buffers are taken: on_loaded wakes us.
                        work_cv.wait_for(lock, loader_poll);
                        continue;
                    }
                    if (stalled && !pending.empty()) {
                        work_cv.wait_until(lock, stall_time + stall_retry);
                    } else {
                        work_cv.wait(lock);
                    }
                }
                if (stopping) break;
                std::size_t take = std::min(settings.batch_pages, pending.size());
                take = std::min(take, stored->room());
                if (take > 0 && (!stalled || wake_epoch != stall_epoch ||
                                 Clock::now() - stall_time >= stall_retry)) {
                    keys = pending.take(take);
                    for (const PendingKey& key : keys) in_flight.insert(key.page);
                }
            }
            if (keys.empty()) continue;
            if (run_batch(std::move(keys), context.get(), async)) {
                stalled = false;
            } else {
                std::lock_guard lock(mutex);
                stalled = true;
                stall_epoch = wake_epoch;
                stall_time = Clock::now();
            }
        }
        if (context) {
            release_finished(context.get(), async, true);
            try {
                context->synchronize();
            } catch (...) {
                record_error(std::current_exception());
            }
        }
    }
};

namespace {
// The most pages the table can ever hold: its pool's windows, or as many as a pool has windows
// for by default where it maps none.
std::size_t most_pages(const PageTableSettings& table) {
    return table.pool.window_pages != 0 ? table.pool.window_pages
                                        : PagePoolSettings::default_window_pages;
}
}  // namespace

Streamer::Streamer(Backend& backend, StreamerSettings settings)
    : state_(std::make_unique<State>(backend, std::move(settings))) {
    State& s = *state_;
    s.settings.table = with_window_pages(backend, std::move(s.settings.table));
    const PageTableSettings& table_settings = s.settings.table;
    if (!table_settings.map_into_region && !table_settings.pool.map_windows) {
        throw Error(Errc::invalid_argument, "Streamer",
                    "the page table neither maps into its region nor maps pool windows: page "
                    "data could not be reached");
    }
    if (s.settings.worker_threads == 0 || s.settings.batch_pages == 0 ||
        s.settings.max_pending == 0) {
        throw Error(Errc::invalid_argument, "Streamer",
                    "worker_threads, batch_pages and max_pending must be > 0",
                    detail::concat("worker_threads=", s.settings.worker_threads,
                                   ", batch_pages=", s.settings.batch_pages,
                                   ", max_pending=", s.settings.max_pending));
    }
    const std::size_t page_size = backend.granularity(table_settings.pool.page_options).minimum;
    if (page_size != page_bytes) {
        throw Error(Errc::not_supported, "Streamer",
                    detail::concat("the backend's pages are ", page_size,
                                   " bytes; virtual textures need ", page_bytes),
                    detail::concat("backend=", backend.name()));
    }
    if (table_settings.pool.map_windows &&
        table_settings.budget_bytes / page_size > table_settings.pool.window_pages) {
        throw Error(Errc::invalid_argument, "Streamer",
                    "the budget holds more pages than the pool has windows for (raise "
                    "pool.window_pages)",
                    detail::concat("budget_pages=", table_settings.budget_bytes / page_size,
                                   ", window_pages=", table_settings.pool.window_pages));
    }
    s.gpu = backend.capabilities().backend == "cuda" && device_fills_built();
    s.device = backend.capabilities().device;

    // The pages that hold packed levels are named past the region asked for, which stays the
    // texture set's: at most a quarter of the largest budget (the pool's windows) by default.
    if (s.settings.pack_levels) {
        s.host_names = s.settings.packed_level_pages > 0
                           ? s.settings.packed_level_pages
                           : std::max<std::size_t>(1, most_pages(table_settings) / 4);
    }
    PageTableSettings table = table_settings;
    table.region_size += s.host_names * page_size;
    table.log = table.log.or_else(s.settings.log);
    table.on_committed =
        [this, user = table_settings.on_committed](std::span<const PageMapping> mappings) {
            if (user) user(mappings);
            state_->on_committed(mappings);
        };
    table.on_evicted = [this,
                        user = table_settings.on_evicted](std::span<const PageMapping> mappings) {
        if (user) user(mappings);
        state_->on_evicted(mappings);
    };
    s.table = std::make_unique<PageTable>(backend, std::move(table));
    s.host_base = s.table->page_count() - s.host_names;
    s.tail_placement =
        std::make_unique<TailPlacement>(backend, s.settings.pack_tails, s.gpu, s.device);
    s.stored = std::make_unique<StoredPageRoute>(
        StoredPageRoute::Hooks{[&s](BatchItem& item, std::uint64_t fence, bool copy_pending) {
                                   s.finish_items(std::span(&item, 1), fence, copy_pending);
                                   s.work_cv.notify_all();  // a read buffer is free
                               },
                               [&s](std::span<const PageIndex> pages) { s.unpin(pages); },
                               [&s](const std::exception_ptr& error) { s.record_error(error); }});
    s.placement = std::make_unique<LevelPlacement>(
        *s.table, s.events,
        LevelPlacement::Hooks{
            [&s](const std::function<std::vector<PageIndex>()>& evict, State::Ticket& ticket) {
                return s.evict_and_unready_levels(evict, ticket);
            },
            [&s](const PageMapping& mapping) { return s.describe(mapping); },
            [&s](const std::exception_ptr& error) { s.record_error(error); }},
        s.host_base, s.host_names, s.settings.packed_level_pages);
    s.textures = std::make_unique<TextureSet>(s.host_base);
    try {
        for (std::size_t i = 0; i < s.settings.worker_threads; ++i) {
            s.workers.emplace_back([this, i] { state_->worker_main(i); });
        }
    } catch (...) {
        {
            std::lock_guard lock(s.mutex);
            s.stopping = true;
        }
        s.work_cv.notify_all();
        for (auto& worker : s.workers) worker.join();
        throw;
    }
}

Streamer::~Streamer() {
    State& s = *state_;
    {
        std::lock_guard lock(s.mutex);
        s.stopping = true;
    }
    s.work_cv.notify_all();
    for (auto& worker : s.workers) worker.join();
    s.events.stop();
    s.stored->stop();
    try {
        if (!s.tails.empty()) s.table->unpin(s.tails);
        const std::vector<PageIndex> hosts = s.placement->held_hosts();
        if (!hosts.empty()) s.table->unpin(hosts);
        s.table->complete_frame(s.table->current_frame());
    } catch (const std::exception& error) {
        s.settings.log.error("streamer: shutting down: ", error.what());
    }
    s.tail_placement.reset();  // its device context, before the pages go
    try {
        s.table->shutdown();  // evicts everything while the streamer is still whole
    } catch (const std::exception& error) {
        s.settings.log.error("streamer: shutting the page table down: ", error.what());
    }
    s.table.reset();
}

PageTable& Streamer::page_table() noexcept { return *state_->table; }

PinnedPages Streamer::pinned_pages() const {
    State& s = *state_;
    const TailPlacement::AddLock adding = s.tail_placement->lock();
    return s.pinned.now(s.level_cap(s.table->budget_pages()));
}
const TextureSet& Streamer::textures() const noexcept { return *state_->textures; }

TextureId Streamer::add_texture(const std::shared_ptr<const TileSource>& source) {
    State& s = *state_;
    TextureId id = 0;
    StreamedPage page;
    bool packed = false;
    {
        const TailPlacement::AddLock adding = s.tail_placement->lock();
        if (source) s.check_pinned_fit_nolock(adding, *source);
        if (source)
            s.stored->start_for(*source, s.settings, s.gpu, s.device);  // changes nothing on error
        id = s.textures->add(source);
        const TextureLayout layout = s.textures->layout(id);
        const PageIndex tail = s.textures->tail_page(id);
        if (auto in_host = s.tail_placement->pack(adding, id, layout, tail, *source)) {
            page = *in_host;
            packed = true;
        } else {
            const std::vector<PageMapping> mappings = s.table->commit(std::span(&tail, 1), true);
            page = s.describe(mappings.front());
            try {
                s.tail_placement->fill_own(adding, layout, page, *source);
            } catch (...) {
                s.table->unpin(std::span(&tail, 1));
                throw;
            }
        }
        s.pinned.add(layout);
    }
    State::Ticket ticket;
    {
        std::lock_guard lock(s.mutex);
        s.ready[page.page] = page;
        if (packed) {
            ++s.packed_tails;
        } else {
            s.tails.push_back(page.page);
        }
        ++s.stats.pages_filled;
        s.stats.bytes_filled += page.bytes;
        ticket = s.events.take();
    }
    s.emit(ticket, StreamerEventKind::ready, std::span(&page, 1));
    return id;
}

StreamRequestResult Streamer::request(std::span<const PageRequest> requests) {
    State& s = *state_;
    StreamRequestResult result;
    std::vector<PendingKey> keys;
    keys.reserve(requests.size());
    for (const PageRequest& request : requests) {
        auto owner = s.textures->find(request.page);
        if (!owner) {
            throw Error(Errc::out_of_range, "Streamer::request", "the page belongs to no texture",
                        detail::concat("page=", request.page));
        }
        keys.push_back(
            {owner->position.mip, std::max<std::uint32_t>(request.count, 1), 0, request.page});
    }
    std::vector<PageIndex> touched;
    std::vector<PendingKey> touched_keys;
    std::vector<std::uint64_t> touched_generations;  // of the ready entries looked at
    const FrameId frame = s.table->current_frame();
    TraceRecorder* const trace = trace::active();
    const std::int64_t trace_start = trace ? trace->now() : 0;
    std::int64_t trace_queued = 0;
    std::vector<PageIndex> traced;  // newly queued, while tracing
    {
        std::lock_guard lock(s.mutex);
        for (PendingKey key : keys) {
            ++s.stats.requests;
            if (auto found = s.ready.find(key.page); found != s.ready.end()) {
                ++result.ready;
                // A packed level is kept for this frame by the streamer; a packed tail is
                // pinned in another texture's tail page, with nothing of its own to keep.
                if (found->second.packed()) {
                    s.placement->touch(key.page, frame);
                    continue;
                }
                touched.push_back(key.page);
                touched_keys.push_back(key);
                touched_generations.push_back(found->second.generation);
                continue;
            }
            if (s.in_flight.count(key.page)) {
                s.asked_in_flight.insert(key.page);
                ++result.already_queued;
                continue;
            }
            bool replaced = false;
            switch (s.pending.add(key, replaced)) {
                case PendingQueue::Added::raised:
                case PendingQueue::Added::already_queued:
                    ++result.already_queued;
                    break;
                case PendingQueue::Added::dropped:
                    ++result.dropped;
                    ++s.stats.dropped_requests;
                    break;
                case PendingQueue::Added::queued:
                    ++result.queued;
                    if (trace) traced.push_back(key.page);
                    if (replaced) {
                        ++result.dropped;
                        ++s.stats.dropped_requests;
                    }
                    break;
            }
        }
        // Before a worker can take them: a page's request precedes its commit.
        if (trace) trace_queued = trace->now();
    }
    for (PageIndex page : traced) {
        trace->complete("page", "request", trace_start, trace_queued,
                        {.page = page, .frame = frame});
    }
    if (result.queued > 0) s.work_cv.notify_all();
    if (!touched.empty()) {
        // Keeps them from eviction until this frame completes. A page evicted since we looked
        // (its evicted event is on its way) was queued by the table instead: take it out of
        // the table's queue and into ours, so that the request is not lost.
        VTPAGE_TEST_POINT("streamer.request.before_touch");
        const RequestResult touch = s.table->request(touched);
        if (touch.queued > 0 || touch.already_queued > 0) {
            s.table->cancel(touched);
            std::size_t requeued = 0;
            for (std::size_t i = 0; i < touched_keys.size(); ++i) {
                PendingKey key = touched_keys[i];
                if (s.table->lookup(key.page)) continue;
                VTPAGE_TEST_POINT("streamer.request.touched_page_gone");
                std::lock_guard lock(s.mutex);
                // Only the entry seen above is stale: another thread may have committed and
                // filled the page again since, and its entry stays.
                auto stale = s.ready.find(key.page);
                if (stale != s.ready.end() && stale->second.generation == touched_generations[i])
                    s.ready.erase(stale);
                if (s.ready.count(key.page)) continue;
                if (s.pending.contains(key.page) || s.in_flight.count(key.page)) continue;
                s.pending.requeue(key);
                --result.ready;
                ++result.queued;
                ++requeued;
            }
            if (requeued > 0) s.work_cv.notify_all();
        }
    }
    return result;
}

StreamRequestResult Streamer::request(std::span<const PageIndex> pages) {
    std::vector<PageRequest> requests;
    requests.reserve(pages.size());
    for (PageIndex page : pages) requests.push_back({page, 0, 0, 1});
    return request(std::span<const PageRequest>(requests));
}

void Streamer::cancel(std::span<const PageIndex> pages) {
    std::lock_guard lock(state_->mutex);
    for (PageIndex page : pages) {
        // Only requests still pending count: ready, in-flight or unknown pages are no-ops.
        state_->stats.cancelled_requests += state_->pending.erase(page) ? 1 : 0;
    }
    state_->notify_if_idle();
}

void Streamer::clear_pending() {
    std::lock_guard lock(state_->mutex);
    state_->stats.cancelled_requests += state_->pending.clear();
    state_->notify_if_idle();
}

FrameId Streamer::begin_frame() { return state_->table->begin_frame(); }

void Streamer::complete_frame(FrameId frame) {
    state_->table->complete_frame(frame);
    // Retired hosts drain as frames complete; never wait for a worker placing levels here.
    if (state_->placement->retiring()) {
        if (auto placing = state_->placement->try_lock_placement()) {
            state_->placement->shrink(placing);
        }
    }
    {
        std::lock_guard lock(state_->mutex);
        ++state_->wake_epoch;
    }
    state_->work_cv.notify_all();
}

void Streamer::set_budget(std::size_t bytes) {
    State& s = *state_;
    {
        // Held while the budget changes, so that no texture is added meanwhile.
        const TailPlacement::AddLock adding = s.tail_placement->lock();
        const std::size_t budget = std::max<std::size_t>(1, bytes / page_bytes);
        const PinnedPages pinned = s.pinned.now(s.level_cap(budget));
        if (budget < pinned.total()) {
            throw Error(
                Errc::out_of_range, "Streamer::set_budget",
                detail::concat("a budget of ", budget, " pages is below the ", pinned.total(),
                               " pages the textures pin (", pinned.tail_pages, " of mip tails, ",
                               pinned.level_pages, " of packed coarse levels)"),
                detail::concat("budget_pages=", budget, ", pinned_pages=", pinned.total()));
        }
        s.table->set_budget(bytes, /*release_idle=*/true);
    }
    state_->placement->shrink(state_->placement->lock_placement());
    {
        std::lock_guard lock(state_->mutex);
        ++state_->wake_epoch;
    }
    state_->work_cv.notify_all();
}

std::size_t Streamer::evict_over_budget(std::size_t max_pages) {
    if (state_->placement->retiring()) {
        state_->placement->shrink(state_->placement->lock_placement());
    }
    return state_->table->evict_over_budget(max_pages);
}

bool Streamer::is_ready(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    return state_->ready.count(page) != 0;
}

std::optional<StreamedPage> Streamer::ready_page(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    auto found = state_->ready.find(page);
    if (found == state_->ready.end()) return std::nullopt;
    return found->second;
}

bool Streamer::is_queued(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    return state_->pending.contains(page) || state_->in_flight.count(page) != 0;
}

std::size_t Streamer::pending_count() const {
    std::lock_guard lock(state_->mutex);
    return state_->pending.size();
}

std::vector<StreamerEvent> Streamer::poll_events() { return state_->events.poll(); }

bool Streamer::wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(state_->mutex);
    return state_->idle_cv.wait_for(lock, timeout, [&] { return state_->idle(); });
}

bool Streamer::wait_idle_while_progressing(std::chrono::milliseconds stall) {
    const auto finished = [this] {
        std::lock_guard lock(state_->mutex);
        return state_->stats.pages_filled + state_->stats.failed_pages;
    };
    const auto slice = std::min(stall, std::chrono::milliseconds(250));
    std::uint64_t seen = finished();
    auto last_progress = std::chrono::steady_clock::now();
    while (!wait_idle(slice)) {
        const std::uint64_t now_finished = finished();
        const auto now = std::chrono::steady_clock::now();
        if (now_finished != seen) {
            seen = now_finished;
            last_progress = now;
        } else if (now - last_progress >= stall) {
            return false;
        }
    }
    return true;
}

std::exception_ptr Streamer::take_error() {
    std::lock_guard lock(state_->mutex);
    if (state_->errors.empty()) return nullptr;
    std::exception_ptr error = state_->errors.front();
    state_->errors.pop_front();
    return error;
}

void Streamer::rethrow_error() {
    if (std::exception_ptr error = take_error()) std::rethrow_exception(error);
}

StreamerStatistics Streamer::statistics() const {
    StreamerStatistics result;
    {
        std::lock_guard lock(state_->mutex);
        result = state_->stats;
        result.pending = state_->pending.size();
        result.in_flight = state_->in_flight.size();
        result.ready_pages = state_->ready.size();
        result.tail_pages = state_->tails.size();
        result.packed_tails = state_->packed_tails;
        result.level_pages = state_->placement->host_count();
        result.packed_levels = state_->placement->resident_levels();
        result.evicted_levels = state_->placement->evicted_levels();
    }
    result.file_reads.distinct_pages = state_->stored->distinct_pages();
    if (const std::optional<PageLoaderStatistics> stored = state_->stored->statistics()) {
        const PageLoaderStatistics& loader = *stored;
        auto& reads = result.file_reads;
        reads.loaded = loader.loaded;
        reads.failed = loader.failed;
        reads.outstanding = loader.outstanding;
        reads.buffers_in_use = loader.buffers_in_use;
        reads.buffers_peak = loader.buffers_peak;
        reads.decode_queue = loader.decode_queue;
        reads.reads_in_flight = loader.reads.in_flight_now;
        reads.reads_peak_in_flight = loader.reads.max_in_flight;
        reads.bytes_read = loader.reads.bytes_read;
        reads.decode_seconds = loader.decode_seconds;
        if (auto backend = state_->stored->backend())
            reads.backend = std::string(to_string(*backend));
    }
    result.textures = state_->textures->texture_count();
    result.table = state_->table->statistics();
    return result;
}

}  // namespace vtpage::vt
