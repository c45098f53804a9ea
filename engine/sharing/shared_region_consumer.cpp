#include "vtpage/sharing/shared_region_consumer.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>

#include "sharing/page_share_io.hpp"
#include "vtpage/core/virtual_region.hpp"

namespace vtpage {

using namespace sharing_detail;

const char* to_string(ProducerState state) noexcept {
    switch (state) {
        case ProducerState::connected:
            return "connected";
        case ProducerState::finished:
            return "finished";
        case ProducerState::lost:
            return "lost";
        case ProducerState::revoked:
            return "revoked";
    }
    return "unknown";
}

namespace {

struct ImportedPage {
    PhysicalHandle handle;
    bool compressed = false;
};

struct MappedPage {
    std::uint64_t physical_id = 0;
    std::uint64_t generation = 0;
};

std::chrono::milliseconds left_until(ShareClock::time_point end) {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(end - ShareClock::now()));
}

// A hello holds a few numbers and the backend's name.
constexpr std::size_t max_hello_bytes = 4096;

Error protocol_error(const std::string& what) {
    return Error(Errc::corrupt_data, "SharedRegionConsumer::poll", what);
}

}  // namespace

struct SharedRegionConsumer::State {
    State(Backend& b, FdSocket s, SharedRegionConsumerSettings settings_)
        : backend(b), socket(std::move(s)), settings(std::move(settings_)) {}

    // The largest message this producer can send: a publish of every page of its region, or a
    // pages message of the most fds one message carries. Larger is refused unread.
    std::size_t max_message_bytes() const {
        constexpr std::size_t envelope = 4096, per_update = 3 * sizeof(std::uint64_t);
        constexpr std::size_t cap = std::size_t(256) << 20;
        return std::min<std::size_t>(cap, envelope + per_update * page_count);
    }

    SharedPage shared_page(PageIndex page, const MappedPage& mapped) const {
        return SharedPage{page, mapped.generation, region->address_of(page),
                          imported.at(mapped.physical_id).compressed};
    }

    void on_pages(ReceivedMessage& received) {
        const auto& ids = received.message.physical_ids;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] == 0 || imported.count(ids[i])) {
                throw protocol_error(
                    detail::concat("physical page ", ids[i], " was sent twice or has id 0"));
            }
            ImportedPage page;
            page.handle = backend.import_fd(received.fds[i].get(), page_size);
            try {
                page.compressed = backend.is_compressed(page.handle);
            } catch (...) {
                backend.release(page.handle);
                throw;
            }
            std::lock_guard lock(mutex);
            imported[ids[i]] = page;
            ++fds_received;
        }
    }

    void on_publish(const ShareMessage& message, SharedRegionUpdate& update) {
        std::vector<PagePlacement> placements;
        for (const SharePageUpdate& u : message.updates) {
            if (u.page >= page_count) {
                throw protocol_error(detail::concat("page ", u.page, " is outside the ", page_count,
                                                    "-page region"));
            }
            if (mapped.count(u.page)) {
                throw protocol_error(
                    detail::concat("page ", u.page, " was published while published"));
            }
            auto found = imported.find(u.physical_id);
            if (found == imported.end()) {
                throw protocol_error(detail::concat("page ", u.page, " uses physical page ",
                                                    u.physical_id, ", whose fd never came"));
            }
            placements.push_back({u.page, found->second.handle});
        }
        std::sort(placements.begin(), placements.end(),
                  [](const PagePlacement& a, const PagePlacement& b) { return a.page < b.page; });
        for (std::size_t i = 1; i < placements.size(); ++i) {
            if (placements[i].page == placements[i - 1].page) {
                throw protocol_error(detail::concat("page ", placements[i].page,
                                                    " is published twice in one message"));
            }
        }
        region->commit(placements);  // one batch: set access once per contiguous run
        std::lock_guard lock(mutex);
        for (const SharePageUpdate& u : message.updates) {
            mapped[u.page] = MappedPage{u.physical_id, u.generation};
            update.published.push_back(shared_page(u.page, mapped[u.page]));
        }
        pages_published += message.updates.size();
    }

    void on_unpublish(const ShareMessage& message, SharedRegionUpdate& update) {
        std::vector<PageIndex> pages;
        std::vector<SharedPage> leaving;
        for (const SharePageUpdate& u : message.updates) {
            auto found = mapped.find(u.page);
            if (found == mapped.end() || found->second.generation != u.generation) {
                throw protocol_error(detail::concat("page ", u.page, " generation ", u.generation,
                                                    " was unpublished but is not published"));
            }
            pages.push_back(u.page);
            leaving.push_back(shared_page(u.page, found->second));
        }
        // Work of this process that still reads the pages must be done before they go.
        if (settings.before_unmap) {
            settings.before_unmap(leaving);
        } else if (backend.capabilities().gpu) {
            backend.synchronize();
        }
        region->decommit(pages);
        {
            std::lock_guard lock(mutex);
            for (PageIndex page : pages) mapped.erase(page);
        }
        pages_unpublished += pages.size();
        update.unpublished.insert(update.unpublished.end(), leaving.begin(), leaving.end());
        ShareMessage ack;
        ack.type = ShareMessageType::ack;
        ack.sequence = message.sequence;
        send_message(socket, ack, {}, ShareClock::now() + settings.io_timeout);
        ++acks_sent;
    }

    void on_forget(const ShareMessage& message) {
        for (std::uint64_t id : message.physical_ids) {
            auto found = imported.find(id);
            if (found == imported.end()) {
                throw protocol_error(
                    detail::concat("physical page ", id, " was forgotten but never sent"));
            }
            // Still mapped would break the protocol, but releasing a mapped page is legal: its
            // memory then lives until the unmap.
            backend.release(found->second.handle);
            std::lock_guard lock(mutex);
            imported.erase(found);
            ++physical_pages_forgotten;
        }
    }

    // Unmaps every page and releases every import: the producer may recycle them now.
    void drop_everything() noexcept {
        std::vector<PageIndex> pages;
        {
            std::lock_guard lock(mutex);
            for (const auto& [page, entry] : mapped) pages.push_back(page);
            mapped.clear();
        }
        try {
            if (!pages.empty()) {
                if (backend.capabilities().gpu) backend.synchronize();
                region->decommit(pages);
            }
        } catch (const Error& error) {
            settings.log.error("page share: unmapping the shared pages failed: ", error.what());
        }
        std::unordered_map<std::uint64_t, ImportedPage> releasing;
        {
            std::lock_guard lock(mutex);
            releasing.swap(imported);
        }
        for (auto& [id, page] : releasing) {
            try {
                backend.release(page.handle);
            } catch (const Error& error) {
                settings.log.error("page share: releasing an imported page failed: ", error.what());
            }
        }
    }

    void end(ProducerState how) {
        std::lock_guard lock(mutex);
        producer = how;
    }

    Backend& backend;
    FdSocket socket;
    SharedRegionConsumerSettings settings;
    ShareHello hello;
    std::size_t page_size = 0;
    std::uint64_t page_count = 0;
    std::unique_ptr<VirtualRegion> region;

    // Guards what the queries read (mapped, producer, imported, the counters) against poll(),
    // the only writer, which reads them without it.
    mutable std::mutex mutex;
    std::map<PageIndex, MappedPage> mapped;
    ProducerState producer = ProducerState::connected;
    std::unordered_map<std::uint64_t, ImportedPage> imported;  // by physical id
    std::atomic<std::uint64_t> fds_received{0}, pages_published{0}, pages_unpublished{0};
    std::atomic<std::uint64_t> acks_sent{0}, physical_pages_forgotten{0}, messages{0};
};

SharedRegionConsumer::SharedRegionConsumer(Backend& backend, FdSocket socket,
                                           SharedRegionConsumerSettings settings)
    : state_(std::make_unique<State>(backend, std::move(socket), std::move(settings))) {
    State& s = *state_;
    const char* operation = "SharedRegionConsumer";
    check_peer(s.socket, s.settings.allowed_uids, operation);
    if (!wait_readable(s.socket, s.settings.io_timeout)) {
        throw Error(Errc::io_error, operation,
                    detail::concat("the producer sent nothing within ",
                                   s.settings.io_timeout.count(), " ms"));
    }
    ReceivedMessage first =
        receive_message(s.socket, ShareClock::now() + s.settings.io_timeout, max_hello_bytes);
    if (first.message.type != ShareMessageType::hello) {
        throw Error(Errc::corrupt_data, operation,
                    detail::concat("the producer began with a ", to_string(first.message.type),
                                   " message instead of hello"));
    }
    s.hello = first.message.hello;
    if (s.hello.backend != backend.name()) {
        throw Error(Errc::not_supported, operation,
                    detail::concat("the producer shares ", s.hello.backend, " pages; this is a ",
                                   backend.name(), " backend"));
    }
    const std::size_t granularity = backend.granularity().minimum;
    if (s.hello.page_size != granularity) {
        throw Error(
            Errc::not_supported, operation,
            detail::concat("the producer's region has ", s.hello.page_count, " pages of ",
                           s.hello.page_size, " bytes; this backend's pages have ", granularity));
    }
    // The most a consumer maps: 2^47 bytes (128 TiB), a region of the page table's address space.
    constexpr std::uint64_t max_region_bytes = std::uint64_t(1) << 47;
    if (s.hello.page_count == 0 || s.hello.page_count > max_region_bytes / s.hello.page_size) {
        throw Error(Errc::not_supported, operation,
                    detail::concat("the producer's region has ", s.hello.page_count, " pages of ",
                                   s.hello.page_size, " bytes; a consumer maps 1 to ",
                                   max_region_bytes / s.hello.page_size, " such pages (",
                                   max_region_bytes, " bytes, the region limit)"));
    }
    s.page_size = s.hello.page_size;
    s.page_count = s.hello.page_count;
    VirtualRegionSettings region;
    region.size = s.page_size * s.page_count;
    region.access = s.settings.access;
    if (region.access.empty()) {
        // Read-only where the device has read-only mappings (probed), else read-write.
        region.access.push_back(
            {backend.capabilities().device,
             backend.capabilities().read_only_access ? Access::read : Access::read_write});
    }
    s.region = std::make_unique<VirtualRegion>(backend, std::move(region));
}

SharedRegionConsumer::~SharedRegionConsumer() {
    State& s = *state_;
    s.drop_everything();
    s.region.reset();
}

SharedRegionUpdate SharedRegionConsumer::poll(std::chrono::milliseconds timeout) {
    State& s = *state_;
    SharedRegionUpdate update;
    if (s.producer != ProducerState::connected) return update;
    // Bounded, so that a busy producer cannot keep this call from returning.
    constexpr std::size_t max_messages = 4096;
    try {
        if (!wait_readable(s.socket, timeout)) return update;
        // One poll handles messages for at most io_timeout once they began to come, so that a
        // producer that sends slowly but without end cannot keep it from returning.
        const auto poll_end = ShareClock::now() + s.settings.io_timeout;
        std::chrono::milliseconds follows{0};
        do {
            ReceivedMessage received = receive_message(
                s.socket, ShareClock::now() + s.settings.io_timeout, s.max_message_bytes());
            ++s.messages;
            ++update.messages;
            const ShareMessage& message = received.message;
            switch (message.type) {
                case ShareMessageType::pages:
                    s.on_pages(received);
                    break;
                case ShareMessageType::publish:
                    s.on_publish(message, update);
                    break;
                case ShareMessageType::unpublish:
                    s.on_unpublish(message, update);
                    break;
                case ShareMessageType::forget:
                    s.on_forget(message);
                    break;
                case ShareMessageType::goodbye:
                    if (message.reason == GoodbyeReason::finished) {
                        s.end(ProducerState::finished);
                        return update;
                    }
                    s.drop_everything();
                    s.end(ProducerState::revoked);
                    throw Error(Errc::io_error, "SharedRegionConsumer::poll",
                                "the producer revoked this consumer's pages (it did not "
                                "acknowledge within the lease); everything is unmapped");
                case ShareMessageType::hello:
                case ShareMessageType::ack:
                    throw protocol_error(detail::concat(
                        "the producer sent a ", to_string(message.type), " message mid-stream"));
            }
            // The fds of new pages come just before the publish that uses them: wait for it,
            // so that a poll returns whole publishes.
            follows = message.type == ShareMessageType::pages ? s.settings.io_timeout
                                                              : std::chrono::milliseconds(0);
        } while (update.messages < max_messages && ShareClock::now() < poll_end &&
                 wait_readable(s.socket, std::min(follows, left_until(poll_end))));
    } catch (const Error& error) {
        if (s.producer != ProducerState::connected) throw;  // revoked, reported above
        if (error.code() == Errc::io_error) {
            // The connection broke. A dead producer recycles nothing: keep what is mapped. A
            // live one cut us off (and may recycle the pages): let go of everything.
            if (process_alive(static_cast<int>(s.hello.producer_pid))) {
                s.drop_everything();
                s.end(ProducerState::revoked);
                throw Error(Errc::io_error, "SharedRegionConsumer::poll",
                            detail::concat("the producer (pid ", s.hello.producer_pid,
                                           ") closed the connection; everything is unmapped"),
                            error.what(), error.backend_code(), error.backend_code_name());
            }
            s.end(ProducerState::lost);
            throw Error(Errc::io_error, "SharedRegionConsumer::poll",
                        detail::concat("the producer (pid ", s.hello.producer_pid,
                                       ") is gone; the pages mapped now stay valid"),
                        error.what(), error.backend_code(), error.backend_code_name());
        }
        // Anything else (a protocol error, a failed map or import) leaves the map in doubt.
        s.settings.log.error("page share: ", error.what(), "; dropping the producer");
        s.drop_everything();
        s.end(ProducerState::revoked);
        shut_down(s.socket);
        throw;
    }
    return update;
}

ProducerState SharedRegionConsumer::state() const {
    std::lock_guard lock(state_->mutex);
    return state_->producer;
}

std::optional<SharedPage> SharedRegionConsumer::lookup(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    auto found = state_->mapped.find(page);
    if (found == state_->mapped.end()) return std::nullopt;
    return state_->shared_page(page, found->second);
}

std::vector<SharedPage> SharedRegionConsumer::pages() const {
    std::lock_guard lock(state_->mutex);
    std::vector<SharedPage> result;
    result.reserve(state_->mapped.size());
    for (const auto& [page, entry] : state_->mapped) {
        result.push_back(state_->shared_page(page, entry));
    }
    return result;
}

DeviceAddress SharedRegionConsumer::base() const noexcept { return state_->region->base(); }
std::size_t SharedRegionConsumer::page_size() const noexcept { return state_->page_size; }
std::uint64_t SharedRegionConsumer::page_count() const noexcept { return state_->page_count; }
std::uint32_t SharedRegionConsumer::producer_pid() const noexcept {
    return state_->hello.producer_pid;
}

SharedRegionConsumerStatistics SharedRegionConsumer::statistics() const {
    const State& s = *state_;
    std::lock_guard lock(s.mutex);
    SharedRegionConsumerStatistics result;
    result.mapped_pages = s.mapped.size();
    result.imported_pages = s.imported.size();
    for (const auto& [id, page] : s.imported) result.compressed_pages += page.compressed;
    result.fds_received = s.fds_received;
    result.pages_published = s.pages_published;
    result.pages_unpublished = s.pages_unpublished;
    result.acks_sent = s.acks_sent;
    result.physical_pages_forgotten = s.physical_pages_forgotten;
    result.messages = s.messages;
    return result;
}

}  // namespace vtpage
