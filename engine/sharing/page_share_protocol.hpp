// The page-sharing protocol's messages and their encoding (docs/sharing.md describes the
// protocol). Each message travels as one FdSocket message: these bytes, plus the page fds for a
// `pages` message. Integers are little-endian; decode() checks every length and count and throws
// corrupt_data for anything malformed, so a broken or hostile peer cannot make the reader
// overrun.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vtpage::sharing_detail {

inline constexpr std::uint32_t share_magic = 0x68737476;  // "vtsh"
inline constexpr std::uint16_t share_protocol_version = 1;

enum class ShareMessageType : std::uint16_t {
    hello = 1,  // producer -> consumer, first: the region's shape and the producer
    pages,      // producer -> consumer: new physical pages, one fd each
    publish,    // producer -> consumer: pages now readable (page, physical page, generation)
    unpublish,  // producer -> consumer: stop using these pages, then acknowledge
    forget,     // producer -> consumer: physical pages the producer released; drop them
    goodbye,    // producer -> consumer: the last message (finished, or revoked)
    ack,        // consumer -> producer: every message up to `sequence` is done
};

enum class GoodbyeReason : std::uint32_t {
    finished = 0,  // the producer is done; what is mapped stays valid (frozen)
    revoked = 1,   // the consumer missed its lease: its mappings are no longer protected
};

struct ShareHello {
    std::uint64_t page_size = 0;
    std::uint64_t page_count = 0;
    std::uint32_t producer_pid = 0;
    std::int32_t device = 0;
    std::string backend;
};

struct SharePageUpdate {
    std::uint64_t page = 0;
    std::uint64_t physical_id = 0;  // 0 in unpublish messages
    std::uint64_t generation = 0;
};

struct ShareMessage {
    ShareMessageType type = ShareMessageType::ack;
    std::uint64_t sequence = 0;
    ShareHello hello;                                // hello
    std::vector<std::uint64_t> physical_ids;         // pages, forget
    std::vector<SharePageUpdate> updates;            // publish, unpublish
    GoodbyeReason reason = GoodbyeReason::finished;  // goodbye
};

std::vector<std::byte> encode(const ShareMessage& message);
ShareMessage decode(std::span<const std::byte> bytes);
const char* to_string(ShareMessageType type) noexcept;

}  // namespace vtpage::sharing_detail
