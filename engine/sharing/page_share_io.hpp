// Socket and process helpers of the page-sharing protocol.
#pragma once

#include <chrono>
#include <span>
#include <vector>

#include "sharing/page_share_protocol.hpp"
#include "vtpage/base/fd_socket.hpp"

namespace vtpage::sharing_detail {

using ShareClock = std::chrono::steady_clock;

// The largest message a consumer sends (an ack is 24 bytes): anything larger is refused before
// it is read.
inline constexpr std::size_t max_consumer_message_bytes = 4096;

// Whether something can be read (or the peer hung up) within timeout.
bool wait_readable(const FdSocket& socket, std::chrono::milliseconds timeout);
// Ends both directions at once: a thread blocked on the socket wakes up, the peer sees EOF.
void shut_down(const FdSocket& socket) noexcept;

// Both throw io_error when the whole message has not crossed by the deadline: a peer that
// trickles bytes cannot stretch it.
void send_message(const FdSocket& socket, const ShareMessage& message, std::span<const int> fds,
                  ShareClock::time_point deadline);
struct ReceivedMessage {
    ShareMessage message;
    std::vector<UniqueFd> fds;
};
ReceivedMessage receive_message(const FdSocket& socket, ShareClock::time_point deadline,
                                std::size_t max_bytes);

// Whether the peer's user may take part: this process's own user, or one of `allowed`.
void check_peer(const FdSocket& socket, std::span<const uid_t> allowed, const char* operation);

// Whether the process runs (a zombie counts as gone: it has closed its descriptors).
bool process_alive(int pid);

}  // namespace vtpage::sharing_detail
