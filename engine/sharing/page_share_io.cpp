#include "sharing/page_share_io.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>

#include "vtpage/base/system_error.hpp"

namespace vtpage::sharing_detail {

bool wait_readable(const FdSocket& socket, std::chrono::milliseconds timeout) {
    pollfd waiting{socket.fd(), POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        const int ready =
            ::poll(&waiting, 1, static_cast<int>(std::max<long long>(0, left.count())));
        if (ready > 0) return true;
        if (ready == 0) return false;
        if (errno != EINTR) throw_errno(Errc::io_error, "page share", "poll failed");
    }
}

void shut_down(const FdSocket& socket) noexcept {
    if (socket.fd() >= 0) ::shutdown(socket.fd(), SHUT_RDWR);
}

void send_message(const FdSocket& socket, const ShareMessage& message, std::span<const int> fds,
                  ShareClock::time_point deadline) {
    const std::vector<std::byte> bytes = encode(message);
    socket.send(bytes, fds, deadline);
}

ReceivedMessage receive_message(const FdSocket& socket, ShareClock::time_point deadline,
                                std::size_t max_bytes) {
    FdSocket::Message raw = socket.receive(deadline, max_bytes);
    ReceivedMessage received{decode(raw.bytes), std::move(raw.fds)};
    const bool carries_fds = received.message.type == ShareMessageType::pages;
    if (!carries_fds && !received.fds.empty()) {
        throw Error(Errc::corrupt_data, "page share protocol",
                    detail::concat("a ", to_string(received.message.type), " message carried ",
                                   received.fds.size(), " descriptors"));
    }
    if (carries_fds && received.fds.size() != received.message.physical_ids.size()) {
        throw Error(
            Errc::corrupt_data, "page share protocol",
            detail::concat("a pages message announced ", received.message.physical_ids.size(),
                           " pages and carried ", received.fds.size(), " descriptors"));
    }
    return received;
}

void check_peer(const FdSocket& socket, std::span<const uid_t> allowed, const char* operation) {
    const FdSocket::Credentials peer = socket.peer_credentials();
    if (peer.uid == ::geteuid()) return;
    if (std::find(allowed.begin(), allowed.end(), peer.uid) != allowed.end()) return;
    throw Error(Errc::access_denied, operation,
                detail::concat("the peer (pid ", peer.pid, ") runs as user ", peer.uid,
                               ", which is neither this process's user nor allowed"));
}

bool process_alive(int pid) {
    if (pid <= 0) return false;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
    // kill() succeeds on a zombie; its state in /proc tells.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;  // no procfs: trust kill()
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return true;
    const char state = line[close + 2];
    return state != 'Z' && state != 'X';
}

}  // namespace vtpage::sharing_detail
