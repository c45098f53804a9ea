#include "vtpage/streaming/streamer/streamer.hpp"

#include <algorithm>
#include <mutex>
#include <string>

#include "streaming/io/usable_cpus.hpp"
#include "streaming/streamer/batch_finisher.hpp"
#include "streaming/streamer/batch_runner.hpp"
#include "streaming/streamer/commit_stage.hpp"
#include "streaming/streamer/error_log.hpp"
#include "streaming/streamer/level_placement.hpp"
#include "streaming/streamer/page_description.hpp"
#include "streaming/streamer/pinned_tally.hpp"
#include "streaming/streamer/request_book.hpp"
#include "streaming/streamer/request_intake.hpp"
#include "streaming/streamer/settings_check.hpp"
#include "streaming/streamer/stored_page_route.hpp"
#include "streaming/streamer/streamer_events.hpp"
#include "streaming/streamer/tail_placement.hpp"
#include "streaming/streamer/worker_pool.hpp"

namespace vtpage::vt {

using namespace streamer_detail;

PageTableSettings recommended_table_settings() {
    PageTableSettings settings;
    settings.region_size = 16_TiB;
    settings.budget_bytes = 1_GiB;
    settings.map_into_region = false;
    settings.pool.map_windows = true;
    settings.evict_ahead_pages = 64;
    return settings;
}

// The parts, wired: each owns its data and its lock (docs/streaming.md, "Inside the streamer").
struct Streamer::State {
    State(Backend& b, StreamerSettings s) : backend(b), settings(std::move(s)) {}

    Backend& backend;
    StreamerSettings settings;  // immutable once the constructor is done
    bool gpu = false;
    int device = 0;
    // Packed coarse levels live in pages past the textures' (host_names of them, from host_base).
    PageIndex host_base = 0;
    std::size_t host_names = 0;

    ErrorLog errors{settings};
    RequestBook book{settings.max_pending, settings.recent_frames};
    StreamerEvents events{settings};
    std::unique_ptr<PageTable> table;
    std::unique_ptr<TextureSet> textures;
    std::unique_ptr<TailPlacement> tail_placement;
    PinnedTally pinned{settings.pack_tails, settings.pack_levels};  // under the add lock
    std::unique_ptr<LevelPlacement> placement;
    std::unique_ptr<StoredPageRoute> stored;
    std::unique_ptr<CommitStage> commits;
    std::unique_ptr<BatchFinisher> finisher;
    std::unique_ptr<BatchRunner> runner;
    std::unique_ptr<RequestIntake> intake;
    std::unique_ptr<WorkerPool> workers;

    void make_table();
    void make_parts();
    StreamedPage describe(const PageMapping& mapping) const {
        return describe_page(*table, *textures, mapping);
    }
    void on_committed(std::span<const PageMapping> mappings);
    void on_evicted(std::span<const PageMapping> mappings);
    std::vector<StreamedPage> evict_and_unready_levels(
        const std::function<std::vector<PageIndex>()>& evict, StreamerEvents::Ticket& ticket);

    std::size_t level_cap(std::size_t budget_pages) const;
    void check_tile_levels(const TileSource& source);
    void check_pinned_fit_nolock(const TailPlacement::AddLock&, const TileSource& source) const;
    StreamedPage make_tail_resident(const TailPlacement::AddLock& adding, TextureId id,
                                    const TileSource& source, bool& packed);

    void release_pinned();
};

// The streamer's own pages for packed levels (LevelPlacement::is_host) have no events.
void Streamer::State::on_committed(std::span<const PageMapping> mappings) {
    if (!events.accepting()) return;
    std::vector<StreamedPage> pages;
    pages.reserve(mappings.size());
    for (const PageMapping& mapping : mappings) {
        if (!placement->is_host(mapping.page)) pages.push_back(describe(mapping));
    }
    // In the page table's report order: a page's commit is reported before it is filled.
    StreamerEvents::Ticket ticket = events.take();
    events.emit(ticket, StreamerEventKind::committed, pages);
}

void Streamer::State::on_evicted(std::span<const PageMapping> mappings) {
    StreamerEvents::Ticket ticket;
    const FrameId frame = table->current_frame();
    {
        const RequestBook::Lock lock = book.lock();
        for (const PageMapping& mapping : mappings) {
            if (placement->is_host(mapping.page)) {
                ++book.stats(lock).released_level_pages;
                continue;
            }
            book.unready(lock, mapping.page, mapping.generation);
            book.demand(lock).evicted(mapping.page, frame);
        }
        ticket = events.take();
    }
    if (!events.accepting()) return;
    std::vector<StreamedPage> pages;
    pages.reserve(mappings.size());
    for (const PageMapping& mapping : mappings) {
        if (!placement->is_host(mapping.page)) pages.push_back(describe(mapping));
    }
    events.emit(ticket, StreamerEventKind::evicted, pages);
}

// LevelPlacement's hook: under the book's lock, the levels `evict` picks leave the pool and the
// ready pages together (a request sees a level placed and ready, or gone).
std::vector<StreamedPage> Streamer::State::evict_and_unready_levels(
    const std::function<std::vector<PageIndex>()>& evict, StreamerEvents::Ticket& ticket) {
    std::vector<StreamedPage> victims;
    const RequestBook::Lock lock = book.lock();
    for (PageIndex level : evict()) {
        if (std::optional<StreamedPage> taken = book.take_ready(lock, level))
            victims.push_back(*taken);
    }
    ticket = events.take();
    return victims;
}

void Streamer::State::make_table() {
    const PageTableSettings& asked = settings.table;
    host_names = level_host_names(settings);
    PageTableSettings table_settings = asked;
    table_settings.region_size += host_names * page_bytes;
    table_settings.log = table_settings.log.or_else(settings.log);
    table_settings.on_committed = [this, user = asked.on_committed](auto mappings) {
        if (user) user(mappings);
        on_committed(mappings);
    };
    table_settings.on_evicted = [this, user = asked.on_evicted](auto mappings) {
        if (user) user(mappings);
        on_evicted(mappings);
    };
    table = std::make_unique<PageTable>(backend, std::move(table_settings));
    host_base = table->page_count() - host_names;
}

void Streamer::State::make_parts() {
    tail_placement = std::make_unique<TailPlacement>(backend, settings.pack_tails, gpu, device);
    stored = std::make_unique<StoredPageRoute>(
        StoredPageRoute::Hooks{[this](BatchItem& item, std::uint64_t fence, bool copy_pending) {
                                   finisher->finish(std::span(&item, 1), fence, copy_pending);
                                   book.notify_workers();  // a read buffer is free
                               },
                               [this](std::span<const PageIndex> pages) { finisher->unpin(pages); },
                               [this](const std::exception_ptr& error) { errors.record(error); }},
        decode_thread_counts(settings.file_reads, usable_cpus()));
    placement = std::make_unique<LevelPlacement>(
        *table, events,
        LevelPlacement::Hooks{[this](const auto& evict, StreamerEvents::Ticket& ticket) {
                                  return evict_and_unready_levels(evict, ticket);
                              },
                              [this](const PageMapping& mapping) { return describe(mapping); },
                              [this](const std::exception_ptr& error) { errors.record(error); }},
        host_base, host_names, settings.packed_level_pages);
    textures = std::make_unique<TextureSet>(host_base);
    commits = std::make_unique<CommitStage>(*table, book, errors);
    finisher = std::make_unique<BatchFinisher>(
        BatchFinisher::Parts{*table, book, events, *placement, errors});
    runner = std::make_unique<BatchRunner>(
        BatchRunner::Parts{*table, *textures, book, *placement, *stored, *commits, *finisher});
    intake = std::make_unique<RequestIntake>(
        RequestIntake::Parts{*table, *textures, book, *placement, settings.refault_hold_frames});
    FillStage::Parts fills{
        backend,  gpu,    device,
        settings, errors, [this](std::span<const PageIndex> pages) { finisher->unpin(pages); }};
    workers = std::make_unique<WorkerPool>(
        WorkerPool::Parts{book, *runner, *stored, std::move(fills), settings.batch_pages});
}

// Pages of packed levels pinned at least, for a budget of `budget_pages`.
std::size_t Streamer::State::level_cap(std::size_t budget_pages) const {
    if (!settings.pack_levels) return 0;
    return std::min(level_page_cap(settings.packed_level_pages, budget_pages), host_names);
}

// Tiles of tile levels are placed as packed levels are: a texture with tile levels needs them.
void Streamer::State::check_tile_levels(const TileSource& source) {
    const TextureShape shape = source.shape();
    if (!shape.valid() || TextureLayout(shape).tile_levels == 0) return;
    if (!placement->enabled()) {
        throw Error(Errc::invalid_argument, "Streamer::add_texture",
                    "a texture with tile levels needs packed levels (StreamerSettings::"
                    "pack_levels), which place its tiles",
                    detail::concat("tile_levels=", shape.tile_levels, ", source=", source.name()));
    }
    placement->streams_tiles();
}

// Refuses a texture whose tail and coarse levels would pin more pages than the budget has.
void Streamer::State::check_pinned_fit_nolock(const TailPlacement::AddLock&,
                                              const TileSource& source) const {
    if (!source.shape().valid()) return;  // TextureSet::add says what is wrong with it
    const std::size_t budget = table->budget_pages();
    const PinnedPages after = pinned.with(TextureLayout(source.shape()), level_cap(budget));
    if (after.total() <= budget) return;
    throw Error(Errc::budget_exhausted, "Streamer::add_texture",
                detail::concat("with this texture the textures would pin ", after.total(),
                               " pages (", after.tail_pages, " of mip tails, ", after.level_pages,
                               " of packed coarse levels) and the budget ", "holds ", budget,
                               "; raise the budget or add fewer textures"),
                detail::concat("pinned_pages=", after.total(), ", budget_pages=", budget,
                               ", source=", source.name()));
}

// The texture's tail, packed into a tail page with room or filled into a page of its own.
StreamedPage Streamer::State::make_tail_resident(const TailPlacement::AddLock& adding, TextureId id,
                                                 const TileSource& source, bool& packed) {
    const TextureLayout layout = textures->layout(id);
    const PageIndex tail = textures->tail_page(id);
    packed = false;
    if (auto in_host = tail_placement->pack(adding, id, layout, tail, source)) {
        packed = true;
        return *in_host;
    }
    const std::vector<PageMapping> mappings = table->commit(std::span(&tail, 1), true);
    const StreamedPage page = describe(mappings.front());
    try {
        tail_placement->fill_own(adding, layout, page, source);
    } catch (...) {
        table->unpin(std::span(&tail, 1));
        throw;
    }
    return page;
}

// At destruction: the tails and level hosts unpinned, the last frame completed.
void Streamer::State::release_pinned() {
    try {
        std::vector<PageIndex> tails;
        {
            const RequestBook::Lock lock = book.lock();
            tails = book.tails(lock);
        }
        if (!tails.empty()) table->unpin(tails);
        const std::vector<PageIndex> hosts = placement->held_hosts();
        if (!hosts.empty()) table->unpin(hosts);
        table->complete_frame(table->current_frame());
    } catch (const std::exception& error) {
        settings.log.error("streamer: shutting down: ", error.what());
    }
}

Streamer::Streamer(Backend& backend, StreamerSettings settings)
    : state_(std::make_unique<State>(backend, std::move(settings))) {
    State& s = *state_;
    s.settings.table = with_window_pages(backend, std::move(s.settings.table));
    check_streamer_settings(backend, s.settings);
    s.gpu = backend.capabilities().backend == "cuda" && device_fills_built();
    s.device = backend.capabilities().device;
    s.make_table();
    s.make_parts();
    s.workers->start(s.settings.worker_threads);
}

Streamer::~Streamer() {
    State& s = *state_;
    // A warm-up the app asked for (table.pool.warm_up_pages) stops first: its pages' callbacks
    // reach what the app owns.
    s.table->pool().stop_warm_up();
    s.workers->stop();
    s.events.stop();
    s.stored->stop();
    s.release_pinned();
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
        if (source) s.check_tile_levels(*source);
        if (source) s.check_pinned_fit_nolock(adding, *source);
        if (source)
            s.stored->start_for(*source, s.settings, s.gpu, s.device);  // changes nothing on error
        id = s.textures->add(source);
        page = s.make_tail_resident(adding, id, *source, packed);
        s.pinned.add(s.textures->layout(id));
    }
    StreamerEvents::Ticket ticket;
    {
        const RequestBook::Lock lock = s.book.lock();
        s.book.set_ready(lock, page.page, page);
        s.book.add_tail(lock, page.page, packed);
        ++s.book.stats(lock).pages_filled;
        s.book.stats(lock).bytes_filled += page.bytes;
        ticket = s.events.take();
    }
    s.events.emit(ticket, StreamerEventKind::ready, std::span(&page, 1));
    return id;
}

StreamRequestResult Streamer::request(std::span<const PageRequest> requests) {
    return state_->intake->request(requests);
}

StreamRequestResult Streamer::request(std::span<const PageIndex> pages) {
    std::vector<PageRequest> requests;
    requests.reserve(pages.size());
    for (PageIndex page : pages) requests.push_back({page, 0, 0, 1});
    return request(std::span<const PageRequest>(requests));
}

void Streamer::cancel(std::span<const PageIndex> pages) {
    const RequestBook::Lock lock = state_->book.lock();
    state_->book.cancel(lock, pages);
}

void Streamer::clear_pending() {
    const RequestBook::Lock lock = state_->book.lock();
    state_->book.clear_pending(lock);
}

FrameId Streamer::begin_frame() { return state_->table->begin_frame(); }

void Streamer::complete_frame(FrameId frame) {
    State& s = *state_;
    s.table->complete_frame(frame);
    // Retired hosts drain as frames complete; never wait for a worker placing levels here.
    if (s.placement->retiring()) {
        if (auto placing = s.placement->try_lock_placement()) s.placement->shrink(placing);
    }
    s.book.wake();
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
    s.placement->shrink(s.placement->lock_placement());
    s.book.wake();
}

void Streamer::set_active_decode_threads(std::size_t count) {
    state_->stored->set_active_decode_threads(count);
}

DecodeThreadLoad Streamer::decode_threads() const { return state_->stored->decode_load(); }

std::size_t Streamer::evict_over_budget(std::size_t max_pages) {
    if (state_->placement->retiring()) {
        state_->placement->shrink(state_->placement->lock_placement());
    }
    return state_->table->evict_over_budget(max_pages);
}

bool Streamer::is_ready(PageIndex page) const {
    const RequestBook::Lock lock = state_->book.lock();
    return state_->book.find_ready(lock, page) != nullptr;
}

std::optional<StreamedPage> Streamer::ready_page(PageIndex page) const {
    const RequestBook::Lock lock = state_->book.lock();
    const StreamedPage* found = state_->book.find_ready(lock, page);
    if (!found) return std::nullopt;
    return *found;
}

std::vector<StreamedPage> Streamer::ready_pages() const {
    const RequestBook::Lock lock = state_->book.lock();
    return state_->book.all_ready(lock);
}

bool Streamer::is_queued(PageIndex page) const {
    const RequestBook::Lock lock = state_->book.lock();
    return state_->book.is_pending(lock, page) || state_->book.in_flight(lock, page);
}

std::size_t Streamer::pending_count() const {
    const RequestBook::Lock lock = state_->book.lock();
    return state_->book.pending_count(lock);
}

std::vector<StreamerEvent> Streamer::poll_events() { return state_->events.poll(); }

bool Streamer::wait_idle(std::chrono::milliseconds timeout) {
    return state_->book.wait_idle(timeout);
}

bool Streamer::wait_idle_while_progressing(std::chrono::milliseconds stall) {
    const auto slice = std::min(stall, std::chrono::milliseconds(250));
    std::uint64_t seen = state_->book.finished_pages();
    auto last_progress = std::chrono::steady_clock::now();
    while (!wait_idle(slice)) {
        const std::uint64_t now_finished = state_->book.finished_pages();
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

std::exception_ptr Streamer::take_error() { return state_->errors.take(); }

void Streamer::rethrow_error() {
    if (std::exception_ptr error = take_error()) std::rethrow_exception(error);
}

BudgetDemand Streamer::budget_demand() const {
    const State& s = *state_;
    const FrameId frame = s.table->current_frame();
    const std::size_t budget = s.table->budget_pages();
    BudgetDemand demand;
    std::size_t pinned = 0;
    {
        const RequestBook::Lock lock = s.book.lock();
        RecentDemand& recent = s.book.demand(lock);
        demand.recent_pages = recent.pages(frame);
        demand.resident_recent_pages = recent.count(
            frame, [&](PageIndex page) { return s.book.find_ready(lock, page) != nullptr; });
        pinned = s.book.tails(lock).size() + s.placement->host_count();
    }
    demand.free_pages = budget - std::min(budget, pinned);
    demand.over_budget_pages =
        demand.recent_pages - std::min(demand.recent_pages, demand.free_pages);
    return demand;
}

StreamerStatistics Streamer::statistics() const {
    const State& s = *state_;
    StreamerStatistics result;
    {
        const RequestBook::Lock lock = s.book.lock();
        result = s.book.snapshot(lock);
        result.level_pages = s.placement->host_count();
        result.packed_levels = s.placement->resident_levels();
        result.evicted_levels = s.placement->evicted_levels();
    }
    const BudgetDemand demand = budget_demand();
    result.recent_pages = demand.recent_pages;
    result.over_budget_pages = demand.over_budget_pages;
    result.errors = s.errors.count();
    s.stored->report(result.file_reads);
    result.textures = s.textures->texture_count();
    result.table = s.table->statistics();
    return result;
}

}  // namespace vtpage::vt
