#include "streaming/streamer/stored_page_route.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "vtpage/base/error.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt::streamer_detail {

void StoredPageRoute::start_for(const TileSource& source, const StreamerSettings& settings,
                                bool gpu, int device) {
    const StreamerFileReads& reads = settings.file_reads;
    if (!reads.enabled || started() || !stored_page_of(&source, 0)) return;
    PageLoaderSettings loader_settings;
    loader_settings.decode_threads = decode_threads_.pool;
    {
        std::lock_guard lock(mutex_);
        loader_settings.active_decode_threads = decode_threads_.active;
    }
    loader_settings.priority = reads.decode_priority;
    loader_settings.read_buffers = reads.read_buffers;
    loader_settings.reads.depth = reads.depth;
    loader_settings.reads.backend = reads.backend;
    loader_settings.reads.page_cache_copiers = reads.page_cache_copiers;
    loader_settings.decoded_pages_kept = reads.decoded_pages_kept;
    loader_settings.reads.layer = reads.layer;
    loader_settings.reads.log = settings.log;
    if (gpu) loader_settings.device = device;
    loader_settings.on_copies_enqueued = settings.on_fills_enqueued;
    loader_settings.on_loaded = [this](PageLoadResult result) {
        land_later({.loaded = std::move(result)});
    };
    loader_settings.on_released = [this](std::uint64_t tag) {
        land_later({.released = PageIndex(tag)});
    };
    loader_settings.log = settings.log;
    start_lander();
    auto made = std::make_unique<PageLoader>(std::move(loader_settings));
    std::lock_guard lock(mutex_);
    loader_ = std::move(made);
    loader_->set_active_decode_threads(decode_threads_.active);  // set while it was made
    room_of_ = loader_.get();
}

bool StoredPageRoute::started() const {
    std::lock_guard lock(mutex_);
    return loader_ != nullptr;
}

std::size_t StoredPageRoute::room() const {
    const PageLoader* loader = room_of_.load();
    return loader ? loader->room() : ~std::size_t(0);
}

std::vector<BatchItem> StoredPageRoute::load(std::vector<BatchItem> items) {
    std::vector<BatchItem> rest, stored;
    for (BatchItem& item : items) {
        if (auto where = stored_page_of(item.source.get(), item.owner.source.page)) {
            item.route = BatchRoute::stored_page;
            item.state = BatchState::filling;
            item.stored = *where;
            stored.push_back(std::move(item));
        } else {
            rest.push_back(std::move(item));
        }
    }
    if (stored.empty()) return rest;
    std::vector<PageLoad> loads;
    PageLoader* loader = nullptr;
    {
        std::lock_guard lock(mutex_);
        loader = loader_.get();
        // Levels and tiles of one stored page (tiles of a tile level) are read and decoded once.
        std::map<std::pair<const TileSource*, std::uint64_t>, std::size_t> load_of_page;
        for (BatchItem& item : stored) {
            const std::pair key(item.source.get(), item.owner.source.page);
            const auto shared = item.place ? load_of_page.find(key) : load_of_page.end();
            if (shared != load_of_page.end()) {
                loads[shared->second].more.push_back(
                    {item.page.data, item.mapping.page, item.place->rows});
            } else {
                if (item.place) load_of_page.emplace(key, loads.size());
                loads.push_back({item.source, item.owner.source.page, item.page.data,
                                 item.mapping.page, item.stored->read,
                                 item.place ? std::optional(item.place->rows) : std::nullopt});
            }
            loading_.emplace(item.mapping.page, std::move(item));
        }
    }
    // The loader lives until stop(), which the workers that call this have outlived.
    loader->load(std::move(loads));
    return rest;
}

void StoredPageRoute::start_lander() {
    if (lander_.joinable()) return;  // a loader that failed to start left it running
    lander_ = std::thread([this] { lander_main(); });
}

void StoredPageRoute::land_later(Landing landing) {
    {
        std::lock_guard lock(landings_mutex_);
        landings_.push_back(std::move(landing));
    }
    landings_cv_.notify_one();
}

void StoredPageRoute::lander_main() {
    trace::name_thread("vtpage lander");
    std::unique_lock lock(landings_mutex_);
    while (true) {
        landings_cv_.wait(lock, [&] { return lander_stopping_ || !landings_.empty(); });
        if (landings_.empty()) return;  // stopping, and everything reported has landed
        const std::deque<Landing> batch = std::exchange(landings_, {});
        lock.unlock();
        {
            VTPAGE_TRACE_SCOPE("page", "land", .count = batch.size());
            for (const Landing& landing : batch) land(landing);
        }
        lock.lock();
    }
}

// A page's copy ends after its load was reported (one decode thread reports both, in this
// order), so a page is unpinned only once it has landed.
void StoredPageRoute::land(const Landing& landing) {
    try {
        if (landing.loaded) {
            on_loaded(*landing.loaded);
        } else {
            hooks_.unpin(std::span(&landing.released, 1));
        }
    } catch (...) {
        hooks_.record_error(std::current_exception());
    }
}

void StoredPageRoute::stop_lander() {
    {
        std::lock_guard lock(landings_mutex_);
        lander_stopping_ = true;
    }
    landings_cv_.notify_all();
    if (lander_.joinable()) lander_.join();
}

void StoredPageRoute::on_loaded(const PageLoadResult& result) {
    BatchItem item;
    {
        std::lock_guard lock(mutex_);
        auto node = loading_.extract(PageIndex(result.tag));
        if (node.empty()) return;
        item = std::move(node.mapped());
        if (result.ok && item.stored) distinct_.insert(item.stored->id);
    }
    if (!result.ok) {
        item.state = BatchState::failed;
        hooks_.record_error(result.error);
    } else {
        item.state = BatchState::filled;
    }
    item.device_copy = result.release_later;
    // A page whose copy still runs is unpinned by on_released.
    hooks_.finish(item, result.fence, result.release_later);
}

void StoredPageRoute::stop() {
    std::unique_ptr<PageLoader> stopping;
    {
        std::lock_guard lock(mutex_);
        room_of_ = nullptr;
        stopping = std::move(loader_);
    }
    const bool stopping_loader = stopping != nullptr;
    stopping.reset();  // its decode threads finish, or drop, what they hold, and report it
    stop_lander();     // what they reported lands
    if (!stopping_loader) return;
    std::vector<PageIndex> dropped;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [page, item] : loading_) {
            if (!item.place) dropped.push_back(page);  // hosts are unpinned with the tails
        }
        loading_.clear();
    }
    hooks_.unpin(dropped);
}

std::size_t StoredPageRoute::distinct_pages() const {
    std::lock_guard lock(mutex_);
    return distinct_.size();
}

std::optional<PageLoaderStatistics> StoredPageRoute::statistics() const {
    std::lock_guard lock(mutex_);
    if (!loader_) return std::nullopt;
    return loader_->statistics();
}

std::optional<FileReadBackend> StoredPageRoute::backend() const {
    std::lock_guard lock(mutex_);
    if (!loader_) return std::nullopt;
    return loader_->backend();
}

void StoredPageRoute::set_active_decode_threads(std::size_t count) {
    if (count == 0 || count > decode_threads_.pool) {
        throw Error(Errc::out_of_range, "Streamer::set_active_decode_threads",
                    detail::concat("active decode threads must be 1 to the ", decode_threads_.pool,
                                   " of the pool"),
                    detail::concat("count=", count, ", pool=", decode_threads_.pool));
    }
    std::lock_guard lock(mutex_);
    decode_threads_.active = count;
    if (loader_) loader_->set_active_decode_threads(count);
}

DecodeThreadLoad StoredPageRoute::decode_load() const {
    DecodeThreadLoad load{.pool = decode_threads_.pool, .automatic = decode_threads_.automatic};
    std::lock_guard lock(mutex_);
    load.active = decode_threads_.active;
    if (!loader_) return load;
    const PageLoaderStatistics loader = loader_->statistics();
    load.waiting_pages = loader.decode_queue;
    load.decoded_pages = loader.loaded + loader.failed;
    load.busy_seconds = loader.decode_seconds;
    return load;
}

void StoredPageRoute::report(StreamerStatistics::FileReads& reads) const {
    reads.distinct_pages = distinct_pages();
    const DecodeThreadLoad decode = decode_load();
    reads.decode_threads = decode.pool;  // before the pipeline starts, what it will start
    reads.active_decode_threads = decode.active;
    const std::optional<PageLoaderStatistics> loaded = statistics();
    if (!loaded) return;
    const PageLoaderStatistics& loader = *loaded;
    reads.loaded = loader.loaded;
    reads.failed = loader.failed;
    reads.outstanding = loader.outstanding;
    reads.buffers_in_use = loader.buffers_in_use;
    reads.buffers_peak = loader.buffers_peak;
    reads.decode_queue = loader.decode_queue;
    reads.reads_in_flight = loader.reads.in_flight_now;
    reads.reads_peak_in_flight = loader.reads.max_in_flight;
    reads.page_cache_attempts = loader.reads.page_cache_attempts;
    reads.bytes_read = loader.reads.bytes_read;
    reads.decode_seconds = loader.decode_seconds;
    reads.decode_parts_helped = loader.parts_helped;
    reads.decoded_page_hits = loader.decoded_page_hits;
    reads.lowered_decode_threads = loader.lowered_decode_threads;
    if (auto used = backend()) reads.backend = std::string(to_string(*used));
}

}  // namespace vtpage::vt::streamer_detail
