// Socket and process helpers of the page-sharing protocol.
#pragma once

#include <chrono>
#include <span>
#include <vector>

#include "page_share_protocol.hpp"
#include "vtpage/base/fd_socket.hpp"

namespace vtpage::sharing_detail {

// Send and receive timeouts on the socket, so that a stalled peer cannot hold us forever.
void set_socket_timeouts(const FdSocket& socket, std::chrono::milliseconds timeout);
// Whether something can be read (or the peer hung up) within timeout.
bool wait_readable(const FdSocket& socket, std::chrono::milliseconds timeout);
// Ends both directions at once: a thread blocked on the socket wakes up, the peer sees EOF.
void shut_down(const FdSocket& socket) noexcept;

void send_message(const FdSocket& socket, const ShareMessage& message,
                  std::span<const int> fds = {});
struct ReceivedMessage {
    ShareMessage message;
    std::vector<UniqueFd> fds;
};
ReceivedMessage receive_message(const FdSocket& socket);

// Whether the process runs (a zombie counts as gone: it has closed its descriptors).
bool process_alive(int pid);

}  // namespace vtpage::sharing_detail
