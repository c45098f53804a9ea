// The producer side of page sharing between processes: a page table whose resident pages other
// processes (consumers, SharedRegionConsumer) map into their own address space and read. The
// protocol is in docs/sharing.md; in short:
//
//   - each physical page's fd goes to a consumer once, over a Unix socket (SCM_RIGHTS); after
//     that, only page-map updates travel: (virtual page, physical page, generation);
//   - publish(pages) pins the pages in the table and tells every consumer they are readable;
//   - unpublish(pages) tells every consumer to stop using them; the pages stay pinned, so the
//     table cannot evict or recycle them, until every consumer has acknowledged (it unmapped
//     them) or is gone. Then they are unpinned and may be evicted: a consumer never reads a page
//     the owner evicted;
//   - a consumer that does not acknowledge within the lease (ack_timeout) is cut off: it gets a
//     "revoked" goodbye and the connection closes, and the pages are released all the same. A
//     consumer that dies simply drops out. Neither takes the producer down.
//
//   SharedRegionProducer producer(backend, {.table = {.region_size = 1_GiB,
//                                                     .budget_bytes = 256_MiB},
//                                           .listen_path = "/run/app/pages.sock"});
//   producer.table().commit(pages);                  // commit and fill them as usual
//   ... write the pages ...
//   producer.publish(pages);                         // consumers may read them now
//   producer.evict(old_pages);                       // unpublish, wait for acks, evict
//
// All members are thread-safe. A service thread accepts connections and ends leases; each
// consumer has a thread that sends its messages and one that reads its acknowledgements, so
// that no consumer, however slow or hostile, delays publish() or the other consumers.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/fd_socket.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/core/latency_histogram.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage {

struct SharedRegionProducerSettings {
    // The shared region: its size, budget, page options (device, compression), policy. Its
    // pool's on_destroyed is chained: the producer also forgets the page's exported fd.
    PageTableSettings table;
    // Listen for consumers on this Unix socket path; empty: add them with add_consumer(). Put
    // it in a directory only its users can enter (mode 0700). A live producer's socket there is
    // never replaced (busy), and only this producer's own socket file is removed at the end.
    std::string listen_path;
    // Consumers of this process's user may connect (SO_PEERCRED), and those of these users.
    // Whoever connects reads every published page (and, on CUDA, could map them read-write).
    std::vector<uid_t> allowed_uids;
    // The lease: a consumer that has not acknowledged an unpublish this long after it was sent
    // is cut off, so that unpublish never waits longer than this for a stuck consumer.
    std::chrono::milliseconds ack_timeout{5000};
    // A message to a consumer (or from one) that has not wholly crossed this long after it
    // began drops the consumer, however it trickles. Consumers must poll at least this often.
    std::chrono::milliseconds io_timeout{5000};
    Log log;
};

struct SharedRegionProducerStatistics {
    std::size_t consumers = 0;  // connected now
    std::uint64_t consumers_joined = 0;
    std::uint64_t consumers_lost = 0;  // hung up, died, or stalled a send (leases included)
    std::uint64_t leases_expired = 0;  // cut off for not acknowledging in time
    std::size_t published_pages = 0;   // readable by consumers now
    std::size_t retiring_pages = 0;    // unpublished, waiting for acknowledgements
    std::size_t exported_pages = 0;    // physical pages whose fd the producer holds
    std::uint64_t pages_published = 0;
    std::uint64_t pages_unpublished = 0;
    std::uint64_t fds_sent = 0;  // one per physical page and consumer, at most
    std::uint64_t acks_received = 0;
    std::uint64_t physical_pages_forgotten = 0;
    LatencySummary unpublish_latency;  // unpublish until the last acknowledgement
    PageTableStatistics table;
};

// Identifies one unpublish() until it completes.
using UnpublishTicket = std::uint64_t;

class SharedRegionProducer {
public:
    // Throws what PageTable throws, io_error when the listen path cannot be bound, and
    // not_supported when the backend cannot export pages as fds.
    SharedRegionProducer(Backend& backend, SharedRegionProducerSettings settings = {});
    // Says goodbye (finished) to every consumer, stops the service thread, unpins what it
    // pinned and destroys the table. What consumers have mapped stays valid for them: the
    // memory lives until the last process lets go of it.
    ~SharedRegionProducer();
    SharedRegionProducer(const SharedRegionProducer&) = delete;
    SharedRegionProducer& operator=(const SharedRegionProducer&) = delete;

    PageTable& table() noexcept;
    Backend& backend() const noexcept;

    // Adds a consumer on a connected socket (e.g. one end of FdSocket::pair()): sends it the
    // region's shape and every page published now. io_error when the peer is gone already.
    void add_consumer(FdSocket socket);
    std::size_t consumer_count() const;
    // Waits until at least `count` consumers are connected; false on timeout.
    bool wait_for_consumers(std::size_t count, std::chrono::milliseconds timeout) const;

    // Pins these resident pages and tells every consumer they are readable (sending fds of the
    // physical pages a consumer has not seen yet). Write them before publishing. not_mapped for
    // a page that is not resident, invalid_argument for a page published already, busy for one
    // still being unpublished; then nothing is published.
    void publish(std::span<const PageIndex> pages);

    // Tells every consumer to stop using the pages. They stay pinned until every consumer
    // connected now has acknowledged or is gone (at most ack_timeout). invalid_argument for a
    // page that is not published (or already being unpublished).
    UnpublishTicket unpublish(std::span<const PageIndex> pages);
    // Whether the unpublish is complete (its pages unpinned); waits up to timeout.
    bool wait(UnpublishTicket ticket,
              std::chrono::milliseconds timeout = std::chrono::milliseconds::max()) const;

    // Waits until every message queued so far went out to each consumer still connected (each
    // consumer's messages are sent by a thread of its own, in order); false on timeout.
    bool flush(std::chrono::milliseconds timeout) const;

    // unpublish(), wait() for it, then table().evict() (which throws busy when the app pins the
    // pages or uses them in a frame that is not complete).
    void evict(std::span<const PageIndex> pages);

    bool is_published(PageIndex page) const;
    std::vector<PageIndex> published_pages() const;
    SharedRegionProducerStatistics statistics() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
