// The consumer side of page sharing between processes: maps the pages a SharedRegionProducer
// publishes into this process's address space, at the same page index, and keeps the map
// current. See docs/sharing.md for the protocol.
//
//   SharedRegionConsumer consumer(backend, FdSocket::connect("/run/app/pages.sock"));
//   for (;;) {
//       auto update = consumer.poll(std::chrono::milliseconds(10));
//       for (const SharedPage& page : update.published) { ... read page.address ... }
//       ... read any page of consumer.pages() ...
//   }
//
// Mappings change only inside poll(): between two polls every page of pages() stays mapped
// with the same bytes, because the producer recycles a page only after this consumer has
// acknowledged its unpublish, and poll() sends that acknowledgement after unmapping it (and after
// waiting for the device, see synchronize_before_unmap). Poll at least every io_timeout of the
// producer, or it drops this consumer.
//
// When the producer goes away: after a "finished" goodbye, or when its process died, what is
// mapped stays mapped and valid (nobody writes it any more) and poll() returns nothing new. When
// the producer is alive but cut this consumer off (a lease it missed, a stalled connection),
// every page is unmapped, since the producer may recycle them. poll() reports the end of the
// connection once: nothing for "finished", an io_error for a lost or revoked producer.
//
// Not thread-safe for poll(); the queries may run on other threads.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/fd_socket.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage {

using PageIndex = std::uint64_t;

// A page as this consumer sees it.
struct SharedPage {
    PageIndex page = 0;
    std::uint64_t generation = 0;  // the producer's commit generation: changes when recommitted
    DeviceAddress address = 0;     // where the bytes are in this process
    bool compressed = false;       // the physical page was granted compression (read back)
};

struct SharedRegionUpdate {
    std::vector<SharedPage> published;    // mapped by this poll
    std::vector<SharedPage> unpublished;  // unmapped by this poll (addresses no longer valid)
    std::size_t messages = 0;             // protocol messages handled
};

enum class ProducerState : std::uint8_t {
    connected,
    finished,  // said goodbye; the mapped pages stay valid
    lost,      // its process is gone; the mapped pages stay valid
    revoked,   // alive but cut this consumer off; everything was unmapped
};
const char* to_string(ProducerState state) noexcept;

struct SharedRegionConsumerSettings {
    // Access to the mapped pages, one entry per device; empty: read-only for the backend's own
    // device (consumers read; the producer owns the bytes), or read-write where the device has
    // no read-only mappings.
    std::vector<DeviceAccess> access;
    // How long to wait for the producer's first message; the deadline for the rest of a
    // message once it has begun (absolute: a producer that trickles bytes cannot stretch it);
    // also the limit on sending an acknowledgement.
    std::chrono::milliseconds io_timeout{5000};
    // The producer must run as this process's user or one of these (SO_PEERCRED).
    std::vector<uid_t> allowed_uids;
    // Called with the pages about to be unmapped, before they are: wait here for GPU work of
    // this process that still reads them (a fence, a stream). When unset and the backend is a
    // GPU, the consumer waits for all of the device's work (Backend::synchronize) instead.
    std::function<void(std::span<const SharedPage>)> before_unmap;
    Log log;
};

struct SharedRegionConsumerStatistics {
    std::size_t mapped_pages = 0;
    std::size_t imported_pages = 0;    // physical pages imported (one fd each, received once)
    std::size_t compressed_pages = 0;  // ... of which were granted compression
    std::uint64_t fds_received = 0;
    std::uint64_t pages_published = 0;
    std::uint64_t pages_unpublished = 0;
    std::uint64_t acks_sent = 0;
    std::uint64_t physical_pages_forgotten = 0;
    std::uint64_t messages = 0;
};

class SharedRegionConsumer {
public:
    // Waits for the producer's hello (io_timeout), reserves as much address space as the
    // producer's region and returns. io_error when the producer does not answer,
    // corrupt_data for a message that is not the protocol's, not_supported for another
    // protocol version or a producer on another backend or page size.
    SharedRegionConsumer(Backend& backend, FdSocket socket,
                         SharedRegionConsumerSettings settings = {});
    // Unmaps everything, releases every imported page and frees the address space.
    ~SharedRegionConsumer();
    SharedRegionConsumer(const SharedRegionConsumer&) = delete;
    SharedRegionConsumer& operator=(const SharedRegionConsumer&) = delete;

    // Handles what the producer sent, waiting up to `timeout` for the first message. Throws
    // io_error once when the connection ends abnormally (see above), corrupt_data when the
    // producer breaks the protocol (then every page is unmapped: nothing it said holds).
    SharedRegionUpdate poll(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

    ProducerState state() const;
    std::optional<SharedPage> lookup(PageIndex page) const;
    std::vector<SharedPage> pages() const;  // by page index
    DeviceAddress base() const noexcept;
    std::size_t page_size() const noexcept;
    std::uint64_t page_count() const noexcept;
    std::uint32_t producer_pid() const noexcept;
    SharedRegionConsumerStatistics statistics() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
