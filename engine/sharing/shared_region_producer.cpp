#include "vtpage/sharing/shared_region_producer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "page_share_io.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage {

using namespace sharing_detail;
using Clock = std::chrono::steady_clock;

namespace {

// One connected consumer.
struct Link {
    std::uint64_t id = 0;
    FdSocket socket;
    std::unordered_set<std::uint64_t> sent;  // physical pages whose fd it has
    std::uint64_t acknowledged = 0;          // every message up to this sequence is done
    bool dead = false;                       // to be dropped (socket already shut down)
};

// A physical page the producer exported: its fd, kept for consumers that join later.
struct ExportedPage {
    std::uint64_t id = 0;
    UniqueFd fd;
};

struct PublishedPage {
    std::uint64_t physical_id = 0;
    std::uint64_t generation = 0;
    bool retiring = false;  // unpublished, waiting for acknowledgements
};

// One unpublish in flight.
struct Ticket {
    std::uint64_t sequence = 0;
    std::vector<PageIndex> pages;
    std::unordered_set<std::uint64_t> waiting_for;  // link ids
    Clock::time_point sent;
    bool finishing = false;  // complete, being unpinned
    bool done = false;
};

}  // namespace

struct SharedRegionProducer::State {
    State(Backend& b, SharedRegionProducerSettings s) : backend(b), settings(std::move(s)) {}

    // Sends to one link; a failure marks it dead (it is dropped by reap()). Caller holds mutex.
    bool send(Link& link, const ShareMessage& message, std::span<const int> fds = {}) {
        if (link.dead) return false;
        try {
            send_message(link.socket, message, fds, Clock::now() + settings.io_timeout);
            return true;
        } catch (const Error& error) {
            settings.log.warning("page share: consumer ", link.id, " dropped: ", error.what());
            cut_off(link);
            return false;
        }
    }
    void cut_off(Link& link) {
        if (link.dead) return;
        link.dead = true;
        shut_down(link.socket);
    }
    // Sends a link the fds it lacks for these physical pages, in messages of at most
    // max_fds_per_message. Caller holds mutex.
    bool send_missing_fds(Link& link, const std::vector<std::uint64_t>& handles) {
        ShareMessage message;
        message.type = ShareMessageType::pages;
        std::vector<int> fds;
        auto flush = [&] {
            if (message.physical_ids.empty()) return true;
            message.sequence = next_sequence++;
            if (!send(link, message, fds)) return false;
            for (std::uint64_t id : message.physical_ids) link.sent.insert(id);
            fds_sent += fds.size();
            message.physical_ids.clear();
            fds.clear();
            return true;
        };
        for (std::uint64_t handle : handles) {
            const ExportedPage& exported = exported_pages.at(handle);
            if (link.sent.count(exported.id)) continue;
            if (std::find(message.physical_ids.begin(), message.physical_ids.end(),
                          exported.id) != message.physical_ids.end()) {
                continue;
            }
            message.physical_ids.push_back(exported.id);
            fds.push_back(exported.fd.get());
            if (fds.size() == FdSocket::max_fds_per_message && !flush()) return false;
        }
        return flush();
    }
    // Drops dead links: they no longer hold up any unpublish. Returns the tickets that are
    // complete now (to be finished without the lock). Caller holds mutex.
    std::vector<UnpublishTicket> reap() {
        std::vector<std::uint64_t> gone;
        for (auto& [id, link] : links) {
            if (link->dead) gone.push_back(id);
        }
        for (std::uint64_t id : gone) {
            links.erase(id);
            ++consumers_lost;
            for (auto& [number, ticket] : tickets) ticket.waiting_for.erase(id);
        }
        if (!gone.empty()) changed.notify_all();
        return complete_tickets();
    }
    std::vector<UnpublishTicket> complete_tickets() {
        std::vector<UnpublishTicket> complete;
        for (auto& [number, ticket] : tickets) {
            if (!ticket.finishing && ticket.waiting_for.empty()) {
                ticket.finishing = true;
                complete.push_back(number);
            }
        }
        return complete;
    }
    // Unpins the pages of complete tickets, then marks them done. Called without the lock.
    void finish(const std::vector<UnpublishTicket>& complete) {
        for (UnpublishTicket number : complete) {
            std::vector<PageIndex> pages;
            {
                std::lock_guard lock(mutex);
                pages = tickets.at(number).pages;
            }
            try {
                table->unpin(pages);
            } catch (const Error& error) {
                settings.log.error("page share: unpinning unpublished pages failed: ",
                                   error.what());
            }
            std::lock_guard lock(mutex);
            Ticket& ticket = tickets.at(number);
            for (PageIndex page : ticket.pages) published.erase(page);
            unpublish_latency.record(Clock::now() - ticket.sent);
            ticket.done = true;
            changed.notify_all();
        }
        // Done tickets nobody waits for are forgotten; wait() on a forgotten ticket is true.
        std::lock_guard lock(mutex);
        while (!tickets.empty() && tickets.begin()->second.done &&
               tickets.size() > max_remembered_tickets) {
            tickets.erase(tickets.begin());
        }
    }
    void wake_service() const {
        const std::uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(wake.get(), &one, sizeof(one));
    }
    // Handshake: hello, the fds of the pages published now, and their map.
    std::shared_ptr<Link> connect(FdSocket socket) {
        check_peer(socket, settings.allowed_uids, "SharedRegionProducer::add_consumer");
        auto link = std::make_shared<Link>();
        link->socket = std::move(socket);
        std::vector<UnpublishTicket> complete;
        bool joined = false;
        {
            std::lock_guard lock(mutex);
            link->id = next_link_id++;
            ShareMessage hello;
            hello.type = ShareMessageType::hello;
            hello.sequence = next_sequence++;
            hello.hello.page_size = table->page_size();
            hello.hello.page_count = table->page_count();
            hello.hello.producer_pid = static_cast<std::uint32_t>(::getpid());
            hello.hello.device = backend.capabilities().device;
            hello.hello.backend = std::string(backend.name());
            ShareMessage snapshot;
            snapshot.type = ShareMessageType::publish;
            std::vector<std::uint64_t> handles;
            for (const auto& [page, entry] : published) {
                if (entry.retiring) continue;
                snapshot.updates.push_back({page, entry.physical_id, entry.generation});
                handles.push_back(handle_of_physical.at(entry.physical_id));
            }
            if (send(*link, hello) && send_missing_fds(*link, handles)) {
                snapshot.sequence = next_sequence++;
                if (snapshot.updates.empty() || send(*link, snapshot)) {
                    links[link->id] = link;
                    ++consumers_joined;
                    joined = true;
                    changed.notify_all();
                }
            }
            complete = reap();
        }
        finish(complete);
        if (!joined) {
            throw Error(Errc::io_error, "SharedRegionProducer::add_consumer",
                        "the consumer left during the handshake");
        }
        wake_service();
        return link;
    }
    void on_page_destroyed(const PooledPage& page) {
        std::vector<UnpublishTicket> complete;
        {
            std::lock_guard lock(mutex);
            auto found = exported_pages.find(page.handle.value);
            if (found == exported_pages.end()) return;
            const std::uint64_t id = found->second.id;
            ShareMessage forget;
            forget.type = ShareMessageType::forget;
            forget.physical_ids = {id};
            for (auto& [link_id, link] : links) {
                if (!link->sent.erase(id)) continue;
                forget.sequence = next_sequence++;
                send(*link, forget);
            }
            handle_of_physical.erase(id);
            exported_pages.erase(found);  // closes the fd
            ++physical_pages_forgotten;
            complete = reap();
        }
        finish(complete);
    }
    void handle(Link& link, const ReceivedMessage& received) {
        // Caller holds mutex.
        if (received.message.type != ShareMessageType::ack) {
            throw Error(Errc::corrupt_data, "page share protocol",
                        detail::concat("a consumer sent a ",
                                       to_string(received.message.type), " message"));
        }
        if (received.message.sequence >= next_sequence) {
            throw Error(Errc::corrupt_data, "page share protocol",
                        detail::concat("a consumer acknowledged message ",
                                       received.message.sequence, ", which was never sent"));
        }
        ++acks_received;
        link.acknowledged = std::max(link.acknowledged, received.message.sequence);
        for (auto& [number, ticket] : tickets) {
            if (ticket.sequence <= link.acknowledged) ticket.waiting_for.erase(link.id);
        }
    }
    void serve();

    Backend& backend;
    SharedRegionProducerSettings settings;
    std::unique_ptr<PageTable> table;

    mutable std::mutex mutex;
    mutable std::condition_variable changed;
    std::map<std::uint64_t, std::shared_ptr<Link>> links;
    std::unordered_map<std::uint64_t, ExportedPage> exported_pages;  // by handle value
    std::unordered_map<std::uint64_t, std::uint64_t> handle_of_physical;  // id -> handle
    std::unordered_map<PageIndex, PublishedPage> published;
    std::map<UnpublishTicket, Ticket> tickets;
    static constexpr std::size_t max_remembered_tickets = 1024;
    std::uint64_t next_link_id = 1, next_physical_id = 1, next_sequence = 1, next_ticket = 1;
    std::uint64_t consumers_joined = 0, consumers_lost = 0, leases_expired = 0;
    std::uint64_t pages_published = 0, pages_unpublished = 0, fds_sent = 0, acks_received = 0;
    std::uint64_t physical_pages_forgotten = 0;
    LatencyHistogram unpublish_latency;

    FdSocket listener;
    UniqueFd wake;
    std::atomic<bool> stop{false};
    std::thread service;
};

void SharedRegionProducer::State::serve() {
    for (;;) {
        std::vector<pollfd> fds;
        std::vector<std::shared_ptr<Link>> polled;
        int timeout_ms = 1000;
        {
            std::lock_guard lock(mutex);
            if (stop) return;
            fds.push_back({wake.get(), POLLIN, 0});
            if (listener.fd() >= 0) fds.push_back({listener.fd(), POLLIN, 0});
            for (auto& [id, link] : links) {
                if (link->dead) continue;
                fds.push_back({link->socket.fd(), POLLIN, 0});
                polled.push_back(link);
            }
            const auto now = Clock::now();
            for (const auto& [number, ticket] : tickets) {
                if (ticket.finishing) continue;
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    ticket.sent + settings.ack_timeout - now);
                timeout_ms = std::clamp<int>(static_cast<int>(left.count()) + 1, 0, timeout_ms);
            }
        }
        const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0 && errno != EINTR) {
            settings.log.error("page share: poll failed; the service thread stops");
            return;
        }
        if (stop) return;
        std::size_t at = 0;
        if (ready > 0 && fds[at].revents) {
            std::uint64_t count = 0;
            [[maybe_unused]] ssize_t n = ::read(wake.get(), &count, sizeof(count));
        }
        ++at;
        if (listener.fd() >= 0) {
            if (ready > 0 && fds[at].revents) {
                try {
                    connect(listener.accept());
                } catch (const Error& error) {
                    settings.log.warning("page share: a consumer could not join: ",
                                         error.what());
                }
            }
            ++at;
        }
        std::vector<UnpublishTicket> complete;
        for (std::size_t i = 0; i < polled.size(); ++i, ++at) {
            if (ready <= 0 || !fds[at].revents) continue;
            Link& link = *polled[i];
            try {
                // Outside the lock: a slow sender must not hold up publish().
                ReceivedMessage received = receive_message(
                    link.socket, Clock::now() + settings.io_timeout, max_consumer_message_bytes);
                std::lock_guard lock(mutex);
                handle(link, received);
            } catch (const Error& error) {
                std::lock_guard lock(mutex);
                if (!link.dead) {
                    settings.log.info("page share: consumer ", link.id, " left: ",
                                      error.what());
                }
                cut_off(link);
            }
        }
        {
            std::lock_guard lock(mutex);
            // Leases: a consumer that has not acknowledged in time is cut off.
            const auto now = Clock::now();
            for (auto& [number, ticket] : tickets) {
                if (ticket.finishing || now < ticket.sent + settings.ack_timeout) continue;
                for (std::uint64_t id : ticket.waiting_for) {
                    auto found = links.find(id);
                    if (found == links.end() || found->second->dead) continue;
                    settings.log.warning("page share: consumer ", id,
                                         " did not acknowledge unpublish ", ticket.sequence,
                                         " within ", settings.ack_timeout.count(),
                                         " ms; its pages are revoked");
                    ShareMessage goodbye;
                    goodbye.type = ShareMessageType::goodbye;
                    goodbye.sequence = next_sequence++;
                    goodbye.reason = GoodbyeReason::revoked;
                    send(*found->second, goodbye);
                    cut_off(*found->second);
                    ++leases_expired;
                }
            }
            complete = reap();
        }
        finish(complete);
    }
}

SharedRegionProducer::SharedRegionProducer(Backend& backend, SharedRegionProducerSettings settings)
    : state_(std::make_unique<State>(backend, std::move(settings))) {
    State& s = *state_;
    if (!backend.capabilities().fd_handles) {
        throw Error(Errc::not_supported, "SharedRegionProducer",
                    detail::concat("the ", backend.name(),
                                   " backend cannot export pages as fds on this device"));
    }
    if (!s.settings.table.pool.page_options.exportable) {
        throw Error(Errc::invalid_argument, "SharedRegionProducer",
                    "shared pages must be exportable (pool.page_options.exportable)");
    }
    if (s.settings.ack_timeout.count() <= 0 || s.settings.io_timeout.count() <= 0) {
        throw Error(Errc::invalid_argument, "SharedRegionProducer",
                    "ack_timeout and io_timeout must be positive");
    }
    PageTableSettings table_settings = s.settings.table;
    auto user_destroyed = table_settings.pool.on_destroyed;
    State* raw = &s;
    table_settings.pool.on_destroyed = [raw, user_destroyed](const PooledPage& page) {
        if (user_destroyed) user_destroyed(page);
        raw->on_page_destroyed(page);
    };
    s.table = std::make_unique<PageTable>(backend, std::move(table_settings));
    s.wake = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!s.wake) throw_errno(Errc::io_error, "SharedRegionProducer", "eventfd failed");
    if (!s.settings.listen_path.empty()) {
        s.listener = FdSocket::listen(s.settings.listen_path);
        // A connection that vanishes between poll and accept must not block the service thread.
        const int flags = ::fcntl(s.listener.fd(), F_GETFL);
        if (flags < 0 || ::fcntl(s.listener.fd(), F_SETFL, flags | O_NONBLOCK) != 0) {
            throw_errno(Errc::io_error, "SharedRegionProducer", "fcntl failed",
                        s.settings.listen_path);
        }
    }
    s.service = std::thread([raw] { raw->serve(); });
}

SharedRegionProducer::~SharedRegionProducer() {
    State& s = *state_;
    {
        std::lock_guard lock(s.mutex);
        s.stop = true;
    }
    s.wake_service();
    if (s.service.joinable()) s.service.join();
    std::vector<PageIndex> pinned;
    {
        std::lock_guard lock(s.mutex);
        ShareMessage goodbye;
        goodbye.type = ShareMessageType::goodbye;
        goodbye.reason = GoodbyeReason::finished;
        for (auto& [id, link] : s.links) {
            goodbye.sequence = s.next_sequence++;
            s.send(*link, goodbye);
            s.cut_off(*link);
        }
        s.links.clear();
        for (const auto& [page, entry] : s.published) pinned.push_back(page);
        s.published.clear();
    }
    try {
        if (!pinned.empty()) s.table->unpin(pinned);
    } catch (const Error& error) {
        s.settings.log.error("page share: unpinning at shutdown failed: ", error.what());
    }
    s.table.reset();  // evicts everything; on_page_destroyed closes the exported fds
    std::lock_guard lock(s.mutex);
    s.exported_pages.clear();
    s.listener.remove_listening_path();
}

PageTable& SharedRegionProducer::table() noexcept { return *state_->table; }
Backend& SharedRegionProducer::backend() const noexcept { return state_->backend; }

void SharedRegionProducer::add_consumer(FdSocket socket) {
    state_->connect(std::move(socket));
}

std::size_t SharedRegionProducer::consumer_count() const {
    std::lock_guard lock(state_->mutex);
    std::size_t count = 0;
    for (const auto& [id, link] : state_->links) count += link->dead ? 0 : 1;
    return count;
}

bool SharedRegionProducer::wait_for_consumers(std::size_t count,
                                              std::chrono::milliseconds timeout) const {
    std::unique_lock lock(state_->mutex);
    return state_->changed.wait_for(lock, timeout, [&] {
        std::size_t live = 0;
        for (const auto& [id, link] : state_->links) live += link->dead ? 0 : 1;
        return live >= count;
    });
}

void SharedRegionProducer::publish(std::span<const PageIndex> pages) {
    State& s = *state_;
    if (pages.empty()) return;
    {
        std::lock_guard lock(s.mutex);
        std::unordered_set<PageIndex> seen;
        for (PageIndex page : pages) {
            auto found = s.published.find(page);
            if (found != s.published.end()) {
                throw Error(found->second.retiring ? Errc::busy : Errc::invalid_argument,
                            "SharedRegionProducer::publish",
                            found->second.retiring ? "the page is still being unpublished"
                                                   : "the page is published already",
                            detail::concat("page=", page));
            }
            if (!seen.insert(page).second) {
                throw Error(Errc::invalid_argument, "SharedRegionProducer::publish",
                            "the page is given twice", detail::concat("page=", page));
            }
        }
    }
    // Pinned first, so that the mappings read next cannot change under us.
    s.table->pin(pages);
    std::vector<PageMapping> mappings;
    std::vector<UnpublishTicket> complete;
    try {
        for (PageIndex page : pages) mappings.push_back(*s.table->lookup(page));
        std::lock_guard lock(s.mutex);
        for (PageIndex page : pages) {
            if (s.published.count(page)) {
                throw Error(Errc::busy, "SharedRegionProducer::publish",
                            "another thread published the page meanwhile",
                            detail::concat("page=", page));
            }
        }
        // Export what has not been exported yet (once per physical page, kept for later).
        std::vector<std::uint64_t> handles;
        for (const PageMapping& mapping : mappings) {
            const std::uint64_t handle = mapping.physical.handle.value;
            handles.push_back(handle);
            if (s.exported_pages.count(handle)) continue;
            ExportedPage exported;
            exported.fd = s.backend.export_fd(mapping.physical.handle);
            exported.id = s.next_physical_id++;
            s.handle_of_physical[exported.id] = handle;
            s.exported_pages.emplace(handle, std::move(exported));
        }
        ShareMessage message;
        message.type = ShareMessageType::publish;
        for (const PageMapping& mapping : mappings) {
            const std::uint64_t id = s.exported_pages.at(mapping.physical.handle.value).id;
            s.published[mapping.page] = PublishedPage{id, mapping.generation, false};
            message.updates.push_back({mapping.page, id, mapping.generation});
        }
        s.pages_published += mappings.size();
        for (auto& [id, link] : s.links) {
            if (!s.send_missing_fds(*link, handles)) continue;
            message.sequence = s.next_sequence++;
            s.send(*link, message);
        }
        complete = s.reap();
    } catch (...) {
        // Whatever threw (a lookup, an export) did so before anything was recorded or sent.
        s.table->unpin(pages);
        throw;
    }
    s.finish(complete);
}

UnpublishTicket SharedRegionProducer::unpublish(std::span<const PageIndex> pages) {
    State& s = *state_;
    if (pages.empty()) return 0;  // no such ticket: wait() says it is done
    std::vector<UnpublishTicket> complete;
    UnpublishTicket number = 0;
    {
        std::lock_guard lock(s.mutex);
        std::unordered_set<PageIndex> seen;
        for (PageIndex page : pages) {
            auto found = s.published.find(page);
            if (found == s.published.end() || found->second.retiring ||
                !seen.insert(page).second) {
                throw Error(Errc::invalid_argument, "SharedRegionProducer::unpublish",
                            "the page is not published (or is being unpublished already)",
                            detail::concat("page=", page));
            }
        }
        ShareMessage message;
        message.type = ShareMessageType::unpublish;
        message.sequence = s.next_sequence++;
        Ticket ticket;
        ticket.sequence = message.sequence;
        ticket.sent = Clock::now();
        for (PageIndex page : pages) {
            PublishedPage& entry = s.published.at(page);
            entry.retiring = true;
            message.updates.push_back({page, 0, entry.generation});
            ticket.pages.push_back(page);
        }
        for (auto& [id, link] : s.links) {
            if (s.send(*link, message)) ticket.waiting_for.insert(id);
        }
        s.pages_unpublished += pages.size();
        number = s.next_ticket++;
        s.tickets.emplace(number, std::move(ticket));
        complete = s.reap();
    }
    s.wake_service();  // its lease deadline
    s.finish(complete);
    return number;
}

bool SharedRegionProducer::wait(UnpublishTicket ticket, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(state_->mutex);
    auto done = [&] {
        auto found = state_->tickets.find(ticket);
        return found == state_->tickets.end() || found->second.done;
    };
    if (timeout == std::chrono::milliseconds::max()) {
        state_->changed.wait(lock, done);
        return true;
    }
    return state_->changed.wait_for(lock, timeout, done);
}

void SharedRegionProducer::evict(std::span<const PageIndex> pages) {
    wait(unpublish(pages));
    state_->table->evict(pages);
}

bool SharedRegionProducer::is_published(PageIndex page) const {
    std::lock_guard lock(state_->mutex);
    auto found = state_->published.find(page);
    return found != state_->published.end() && !found->second.retiring;
}

std::vector<PageIndex> SharedRegionProducer::published_pages() const {
    std::vector<PageIndex> pages;
    {
        std::lock_guard lock(state_->mutex);
        for (const auto& [page, entry] : state_->published) {
            if (!entry.retiring) pages.push_back(page);
        }
    }
    std::sort(pages.begin(), pages.end());
    return pages;
}

SharedRegionProducerStatistics SharedRegionProducer::statistics() const {
    SharedRegionProducerStatistics result;
    {
        const State& s = *state_;
        std::lock_guard lock(s.mutex);
        for (const auto& [id, link] : s.links) result.consumers += link->dead ? 0 : 1;
        result.consumers_joined = s.consumers_joined;
        result.consumers_lost = s.consumers_lost;
        result.leases_expired = s.leases_expired;
        for (const auto& [page, entry] : s.published) {
            ++(entry.retiring ? result.retiring_pages : result.published_pages);
        }
        result.exported_pages = s.exported_pages.size();
        result.pages_published = s.pages_published;
        result.pages_unpublished = s.pages_unpublished;
        result.fds_sent = s.fds_sent;
        result.acks_received = s.acks_received;
        result.physical_pages_forgotten = s.physical_pages_forgotten;
    }
    result.unpublish_latency = state_->unpublish_latency.summary();
    result.table = state_->table->statistics();
    return result;
}

}  // namespace vtpage
