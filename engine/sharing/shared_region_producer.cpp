#include "vtpage/sharing/shared_region_producer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "sharing/page_share_io.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage {

using namespace sharing_detail;
using Clock = std::chrono::steady_clock;

// Locking: State::mutex guards everything in State and in every Link except the socket's I/O.
// Functions named *_nolock expect their caller to hold it. No socket I/O and no backend call
// happens under it: each consumer has a writer thread that sends its queued messages and a
// reader thread that receives its acknowledgements, so a consumer that stops reading (or
// trickles bytes) stalls only its own threads, never publish() or the other consumers.

namespace {

using SharedFd = std::shared_ptr<const UniqueFd>;

// A message queued for one consumer, with the page fds it carries (kept open until sent).
struct Outgoing {
    ShareMessage message;
    std::vector<SharedFd> fds;
};

// One connected consumer.
struct Link {
    std::uint64_t id = 0;
    FdSocket socket;
    std::unordered_set<std::uint64_t> sent;  // physical pages whose fd it has (or will have)
    std::uint64_t acknowledged = 0;          // every message up to this sequence is done
    std::deque<Outgoing> outbox;             // sent in order by the writer thread
    bool sending = false;                    // the writer is sending one it took from outbox
    bool closing = false;  // sends what is queued (a goodbye last), then is cut off
    Clock::time_point close_by = Clock::time_point::max();
    bool dead = false;  // cut off: socket shut down, to be dropped by reap_nolock()
    std::thread writer, reader;

    bool live() const { return !dead && !closing; }
};

// A physical page the producer exported: its fd, kept for consumers that join later.
struct ExportedPage {
    std::uint64_t id = 0;
    SharedFd fd;
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

// A consumer whose queue grows past this is not reading: it is cut off rather than holding
// fds and memory without bound.
constexpr std::size_t max_queued_messages = 16384;

void join(std::thread& thread) {
    if (thread.joinable()) thread.join();
}

}  // namespace

struct SharedRegionProducer::State {
    State(Backend& b, SharedRegionProducerSettings s) : backend(b), settings(std::move(s)) {}

    // Queues a message for one link; false when the link is gone or closing.
    bool send_nolock(Link& link, ShareMessage message, std::vector<SharedFd> fds = {}) {
        if (!link.live()) return false;
        if (link.outbox.size() >= max_queued_messages) {
            settings.log.warning("page share: consumer ", link.id, " dropped: it has not read ",
                                 link.outbox.size(), " messages");
            cut_off_nolock(link);
            return false;
        }
        link.outbox.push_back({std::move(message), std::move(fds)});
        outbox_changed.notify_all();
        return true;
    }
    void cut_off_nolock(Link& link) {
        if (link.dead) return;
        link.dead = true;
        link.outbox.clear();
        shut_down(link.socket);  // wakes its reader and writer; not blocking
        outbox_changed.notify_all();
    }
    // Sends what is queued, then the goodbye, then cuts the link off (by close_by at the latest).
    void close_nolock(Link& link, GoodbyeReason reason, std::chrono::milliseconds within) {
        ShareMessage goodbye;
        goodbye.type = ShareMessageType::goodbye;
        goodbye.sequence = next_sequence++;
        goodbye.reason = reason;
        send_nolock(link, std::move(goodbye));
        link.closing = true;
        link.close_by = Clock::now() + within;
        outbox_changed.notify_all();
    }
    // Queues the fds a link lacks for these physical pages, in messages of at most
    // max_fds_per_message.
    bool send_missing_fds_nolock(Link& link, const std::vector<std::uint64_t>& handles) {
        ShareMessage message;
        message.type = ShareMessageType::pages;
        std::vector<SharedFd> fds;
        auto flush = [&] {
            if (message.physical_ids.empty()) return true;
            message.sequence = next_sequence++;
            const std::vector<std::uint64_t> ids = message.physical_ids;
            fds_sent += fds.size();
            if (!send_nolock(link, message, std::move(fds))) return false;
            for (std::uint64_t id : ids) link.sent.insert(id);
            message.physical_ids.clear();
            fds.clear();
            return true;
        };
        for (std::uint64_t handle : handles) {
            const ExportedPage& exported = exported_pages.at(handle);
            if (link.sent.count(exported.id)) continue;
            if (std::find(message.physical_ids.begin(), message.physical_ids.end(), exported.id) !=
                message.physical_ids.end()) {
                continue;
            }
            message.physical_ids.push_back(exported.id);
            fds.push_back(exported.fd);
            if (fds.size() == FdSocket::max_fds_per_message && !flush()) return false;
        }
        return flush();
    }
    // Drops dead links: they no longer hold up any unpublish (their threads are joined later,
    // without the lock). Returns the tickets that are complete now (to be finished without the
    // lock).
    std::vector<UnpublishTicket> reap_nolock() {
        std::vector<std::uint64_t> gone;
        for (auto& [id, link] : links) {
            if (link->dead) gone.push_back(id);
        }
        for (std::uint64_t id : gone) {
            graveyard.push_back(links.at(id));
            links.erase(id);
            ++consumers_lost;
            forget_link_nolock(id);
        }
        if (!gone.empty()) changed.notify_all();
        return complete_tickets_nolock();
    }
    void forget_link_nolock(std::uint64_t id) {
        for (auto& [number, ticket] : tickets) ticket.waiting_for.erase(id);
    }
    std::vector<UnpublishTicket> complete_tickets_nolock() {
        std::vector<UnpublishTicket> complete;
        for (auto& [number, ticket] : tickets) {
            if (!ticket.finishing && ticket.waiting_for.empty()) {
                ticket.finishing = true;
                complete.push_back(number);
            }
        }
        return complete;
    }
    // Joins the threads of dropped links. Called without the lock.
    void bury() {
        std::vector<std::shared_ptr<Link>> buried;
        {
            std::lock_guard lock(mutex);
            buried.swap(graveyard);
        }
        for (auto& link : buried) {
            join(link->writer);
            join(link->reader);
        }
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
    // A link's writer thread: sends its queue in order, each message by its own deadline.
    void write_to(const std::shared_ptr<Link>& link) {
        trace::name_thread("vtpage link write");
        for (;;) {
            Outgoing next;
            Clock::time_point deadline;
            {
                std::unique_lock lock(mutex);
                outbox_changed.wait(
                    lock, [&] { return link->dead || link->closing || !link->outbox.empty(); });
                if (link->dead) break;
                if (link->outbox.empty()) {  // closing, and everything went
                    cut_off_nolock(*link);
                    break;
                }
                next = std::move(link->outbox.front());
                link->outbox.pop_front();
                link->sending = true;
                deadline = std::min(Clock::now() + settings.io_timeout, link->close_by);
            }
            std::vector<int> fds;
            for (const SharedFd& fd : next.fds) fds.push_back(fd->get());
            try {
                send_message(link->socket, next.message, fds, deadline);
                std::lock_guard lock(mutex);
                link->sending = false;
                if (link->outbox.empty()) changed.notify_all();  // for flush()
            } catch (const Error& error) {
                std::lock_guard lock(mutex);
                link->sending = false;
                if (!link->dead && !link->closing) {
                    settings.log.warning("page share: consumer ", link->id,
                                         " dropped: ", error.what());
                }
                cut_off_nolock(*link);
                break;
            }
        }
        wake_service();  // to reap it
    }
    // A link's reader thread: acknowledgements, each message by its own deadline.
    void read_from(const std::shared_ptr<Link>& link) {
        trace::name_thread("vtpage link read");
        try {
            for (;;) {
                if (!wait_readable(link->socket, std::chrono::hours(1))) continue;
                ReceivedMessage received = receive_message(
                    link->socket, Clock::now() + settings.io_timeout, max_consumer_message_bytes);
                std::vector<UnpublishTicket> complete;
                {
                    std::lock_guard lock(mutex);
                    if (link->dead) break;
                    handle_nolock(*link, received);
                    complete = complete_tickets_nolock();
                }
                finish(complete);
            }
        } catch (const Error& error) {
            std::lock_guard lock(mutex);
            if (!link->dead && !link->closing) {
                settings.log.info("page share: consumer ", link->id, " left: ", error.what());
            }
            cut_off_nolock(*link);
        }
        wake_service();  // to reap it
    }
    ShareMessage hello_nolock() {
        ShareMessage hello;
        hello.type = ShareMessageType::hello;
        hello.sequence = next_sequence++;
        hello.hello.page_size = table->page_size();
        hello.hello.page_count = table->page_count();
        hello.hello.producer_pid = static_cast<std::uint32_t>(::getpid());
        hello.hello.device = backend.capabilities().device;
        hello.hello.backend = std::string(backend.name());
        return hello;
    }
    // Handshake: hello, the fds of the pages published now, and their map (queued).
    void connect(FdSocket socket) {
        check_peer(socket, settings.allowed_uids, "SharedRegionProducer::add_consumer");
        auto link = std::make_shared<Link>();
        link->socket = std::move(socket);
        std::lock_guard lock(mutex);
        link->id = next_link_id++;
        ShareMessage snapshot;
        snapshot.type = ShareMessageType::publish;
        std::vector<std::uint64_t> handles;
        for (const auto& [page, entry] : published) {
            if (entry.retiring) continue;
            snapshot.updates.push_back({page, entry.physical_id, entry.generation});
            handles.push_back(handle_of_physical.at(entry.physical_id));
        }
        send_nolock(*link, hello_nolock());
        send_missing_fds_nolock(*link, handles);
        if (!snapshot.updates.empty()) {
            snapshot.sequence = next_sequence++;
            send_nolock(*link, std::move(snapshot));
        }
        links[link->id] = link;
        ++consumers_joined;
        // Started under the lock, so that reap_nolock() never sees a link without its threads.
        link->writer = std::thread([this, link] { write_to(link); });
        link->reader = std::thread([this, link] { read_from(link); });
        changed.notify_all();
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
                send_nolock(*link, forget);
            }
            handle_of_physical.erase(id);
            exported_pages.erase(found);  // the fd closes once no queued message holds it
            ++physical_pages_forgotten;
            complete = reap_nolock();
        }
        finish(complete);
    }
    void handle_nolock(Link& link, const ReceivedMessage& received) {
        if (received.message.type != ShareMessageType::ack) {
            throw Error(
                Errc::corrupt_data, "page share protocol",
                detail::concat("a consumer sent a ", to_string(received.message.type), " message"));
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
    // Leases: a consumer that has not acknowledged in time is told so and cut off; the
    // unpublish no longer waits for it.
    void expire_leases_nolock() {
        const auto now = Clock::now();
        for (auto& [number, ticket] : tickets) {
            if (ticket.finishing || now < ticket.sent + settings.ack_timeout) continue;
            for (std::uint64_t id : ticket.waiting_for) {
                auto found = links.find(id);
                if (found == links.end() || !found->second->live()) continue;
                settings.log.warning("page share: consumer ", id, " did not acknowledge unpublish ",
                                     ticket.sequence, " within ", settings.ack_timeout.count(),
                                     " ms; its pages are revoked");
                close_nolock(*found->second, GoodbyeReason::revoked, settings.io_timeout);
                ++leases_expired;
            }
            ticket.waiting_for.clear();
        }
    }
    // How long the service thread may sleep: until the next lease ends (at most 1 s).
    int service_timeout_ms_nolock() const {
        int timeout_ms = 1000;
        const auto now = Clock::now();
        for (const auto& [number, ticket] : tickets) {
            if (ticket.finishing) continue;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                ticket.sent + settings.ack_timeout - now);
            timeout_ms = std::clamp<int>(static_cast<int>(left.count()) + 1, 0, timeout_ms);
        }
        return timeout_ms;
    }
    // Exports the physical pages of these mappings that have no exported fd yet. Called
    // without the lock.
    std::unordered_map<std::uint64_t, UniqueFd> export_missing(
        const std::vector<PageMapping>& mappings) {
        std::vector<PhysicalHandle> missing;
        {
            std::lock_guard lock(mutex);
            for (const PageMapping& mapping : mappings) {
                if (!exported_pages.count(mapping.physical.handle.value)) {
                    missing.push_back(mapping.physical.handle);
                }
            }
        }
        std::unordered_map<std::uint64_t, UniqueFd> fresh;
        for (PhysicalHandle handle : missing) {
            if (!fresh.count(handle.value)) fresh.emplace(handle.value, backend.export_fd(handle));
        }
        return fresh;
    }
    void accept_one() {
        try {
            connect(listener.accept());
        } catch (const Error& error) {
            settings.log.warning("page share: a consumer could not join: ", error.what());
        }
    }
    void serve();

    Backend& backend;
    SharedRegionProducerSettings settings;
    std::unique_ptr<PageTable> table;

    mutable std::mutex mutex;
    mutable std::condition_variable changed;  // links, tickets
    std::condition_variable outbox_changed;   // a link's queue, closing or death
    std::map<std::uint64_t, std::shared_ptr<Link>> links;
    std::vector<std::shared_ptr<Link>> graveyard;  // dropped, threads not joined yet
    std::unordered_map<std::uint64_t, ExportedPage> exported_pages;       // by handle value
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
    trace::name_thread("vtpage sharing");
    for (;;) {
        std::vector<pollfd> fds;
        int timeout_ms = 0;
        {
            std::lock_guard lock(mutex);
            if (stop) return;
            timeout_ms = service_timeout_ms_nolock();
        }
        fds.push_back({wake.get(), POLLIN, 0});
        if (listener.fd() >= 0) fds.push_back({listener.fd(), POLLIN, 0});
        const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0 && errno != EINTR) {
            settings.log.error("page share: poll failed; the service thread stops");
            return;
        }
        if (stop) return;
        if (ready > 0 && fds[0].revents) {
            std::uint64_t count = 0;
            [[maybe_unused]] ssize_t n = ::read(wake.get(), &count, sizeof(count));
        }
        if (ready > 0 && fds.size() > 1 && fds[1].revents) accept_one();
        std::vector<UnpublishTicket> complete;
        {
            std::lock_guard lock(mutex);
            expire_leases_nolock();
            complete = reap_nolock();
        }
        finish(complete);
        bury();
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
    // Every consumer gets what is queued and a goodbye, all within one io_timeout.
    std::vector<std::shared_ptr<Link>> closing;
    std::vector<PageIndex> pinned;
    {
        std::lock_guard lock(s.mutex);
        for (auto& [id, link] : s.links) {
            s.close_nolock(*link, GoodbyeReason::finished, s.settings.io_timeout);
            closing.push_back(link);
        }
        for (const auto& [page, entry] : s.published) pinned.push_back(page);
        s.published.clear();
    }
    for (auto& link : closing) join(link->writer);
    {
        std::lock_guard lock(s.mutex);
        for (auto& link : closing) s.cut_off_nolock(*link);
        s.reap_nolock();
    }
    s.bury();
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

void SharedRegionProducer::add_consumer(FdSocket socket) { state_->connect(std::move(socket)); }

std::size_t SharedRegionProducer::consumer_count() const {
    std::lock_guard lock(state_->mutex);
    std::size_t count = 0;
    for (const auto& [id, link] : state_->links) count += link->live() ? 1 : 0;
    return count;
}

bool SharedRegionProducer::wait_for_consumers(std::size_t count,
                                              std::chrono::milliseconds timeout) const {
    std::unique_lock lock(state_->mutex);
    return state_->changed.wait_for(lock, timeout, [&] {
        std::size_t live = 0;
        for (const auto& [id, link] : state_->links) live += link->live() ? 1 : 0;
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
    std::vector<UnpublishTicket> complete;
    try {
        std::vector<PageMapping> mappings;
        for (PageIndex page : pages) mappings.push_back(*s.table->lookup(page));
        // Exported without the lock (a backend call), once per physical page, kept for later.
        std::unordered_map<std::uint64_t, UniqueFd> fresh = s.export_missing(mappings);
        std::lock_guard lock(s.mutex);
        for (PageIndex page : pages) {
            if (s.published.count(page)) {
                throw Error(Errc::busy, "SharedRegionProducer::publish",
                            "another thread published the page meanwhile",
                            detail::concat("page=", page));
            }
        }
        std::vector<std::uint64_t> handles;
        for (const PageMapping& mapping : mappings) {
            const std::uint64_t handle = mapping.physical.handle.value;
            handles.push_back(handle);
            auto made = fresh.find(handle);
            if (s.exported_pages.count(handle) || made == fresh.end()) continue;
            ExportedPage exported;
            exported.fd = std::make_shared<const UniqueFd>(std::move(made->second));
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
            if (!s.send_missing_fds_nolock(*link, handles)) continue;
            message.sequence = s.next_sequence++;
            s.send_nolock(*link, message);
        }
        complete = s.reap_nolock();
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
            if (found == s.published.end() || found->second.retiring || !seen.insert(page).second) {
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
            if (s.send_nolock(*link, message)) ticket.waiting_for.insert(id);
        }
        s.pages_unpublished += pages.size();
        number = s.next_ticket++;
        s.tickets.emplace(number, std::move(ticket));
        complete = s.reap_nolock();
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

bool SharedRegionProducer::flush(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(state_->mutex);
    return state_->changed.wait_for(lock, timeout, [&] {
        for (const auto& [id, link] : state_->links) {
            if (!link->dead && (link->sending || !link->outbox.empty())) return false;
        }
        return true;
    });
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
        for (const auto& [id, link] : s.links) result.consumers += link->live() ? 1 : 0;
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
