#include "streaming/streamer/stored_page_route.hpp"

#include <sched.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>

namespace vtpage::vt::streamer_detail {

namespace {

// The cores this process may run on (its affinity mask; the machine's where that is unknown).
std::size_t usable_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        return std::size_t(CPU_COUNT(&set));
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

void StoredPageRoute::start_for(const TileSource& source, const StreamerSettings& settings,
                                bool gpu, int device) {
    const StreamerFileReads& reads = settings.file_reads;
    if (!reads.enabled || started() || !stored_page_of(&source, 0)) return;
    PageLoaderSettings loader_settings;
    loader_settings.decode_threads = reads.decode_threads;
    if (loader_settings.decode_threads == 0) {
        loader_settings.decode_threads = std::clamp<std::size_t>(usable_cores() / 2, 2, 8);
    }
    loader_settings.read_buffers = reads.read_buffers;
    loader_settings.reads.depth = reads.depth;
    loader_settings.reads.backend = reads.backend;
    loader_settings.reads.layer = reads.layer;
    loader_settings.reads.log = settings.log;
    if (gpu) loader_settings.device = device;
    loader_settings.on_copies_enqueued = settings.on_fills_enqueued;
    loader_settings.on_loaded = [this](const PageLoadResult& result) { on_loaded(result); };
    loader_settings.on_released = [this](std::uint64_t tag) {
        const PageIndex page = tag;
        hooks_.unpin(std::span(&page, 1));
    };
    loader_settings.log = settings.log;
    auto made = std::make_unique<PageLoader>(std::move(loader_settings));
    std::lock_guard lock(mutex_);
    loader_ = std::move(made);
}

bool StoredPageRoute::started() const {
    std::lock_guard lock(mutex_);
    return loader_ != nullptr;
}

std::size_t StoredPageRoute::room() const {
    std::lock_guard lock(mutex_);
    return loader_ ? loader_->room() : ~std::size_t(0);
}

std::vector<BatchItem> StoredPageRoute::load(std::vector<BatchItem> items) {
    std::vector<BatchItem> rest, stored;
    for (BatchItem& item : items) {
        if (auto where = stored_page_of(item.source.get(), item.owner.layout_page)) {
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
        for (BatchItem& item : stored) {
            loads.push_back({item.source, item.owner.layout_page, item.page.data, item.mapping.page,
                             item.stored->read,
                             item.place ? std::optional(item.place->rows) : std::nullopt});
            loading_.emplace(item.mapping.page, std::move(item));
        }
    }
    // The loader lives until stop(), which the workers that call this have outlived.
    loader->load(std::move(loads));
    return rest;
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
        stopping = std::move(loader_);
    }
    if (!stopping) return;
    stopping.reset();  // its decode threads finish, or drop, what they hold
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

void StoredPageRoute::report(StreamerStatistics::FileReads& reads) const {
    reads.distinct_pages = distinct_pages();
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
    reads.bytes_read = loader.reads.bytes_read;
    reads.decode_seconds = loader.decode_seconds;
    if (auto used = backend()) reads.backend = std::string(to_string(*used));
}

}  // namespace vtpage::vt::streamer_detail
