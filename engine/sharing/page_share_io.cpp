#include "page_share_io.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "vtpage/base/system_error.hpp"

namespace vtpage::sharing_detail {

void set_socket_timeouts(const FdSocket& socket, std::chrono::milliseconds timeout) {
    timeval value{};
    value.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    value.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    if (setsockopt(socket.fd(), SOL_SOCKET, SO_SNDTIMEO, &value, sizeof(value)) != 0 ||
        setsockopt(socket.fd(), SOL_SOCKET, SO_RCVTIMEO, &value, sizeof(value)) != 0) {
        throw_errno(Errc::io_error, "page share", "setting the socket's timeouts failed",
                    detail::concat("fd=", socket.fd()));
    }
}

bool wait_readable(const FdSocket& socket, std::chrono::milliseconds timeout) {
    pollfd waiting{socket.fd(), POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        const int ready = ::poll(&waiting, 1, static_cast<int>(std::max<long long>(0, left.count())));
        if (ready > 0) return true;
        if (ready == 0) return false;
        if (errno != EINTR) throw_errno(Errc::io_error, "page share", "poll failed");
    }
}

void shut_down(const FdSocket& socket) noexcept {
    if (socket.fd() >= 0) ::shutdown(socket.fd(), SHUT_RDWR);
}

void send_message(const FdSocket& socket, const ShareMessage& message, std::span<const int> fds) {
    const std::vector<std::byte> bytes = encode(message);
    socket.send(bytes, fds);
}

ReceivedMessage receive_message(const FdSocket& socket) {
    FdSocket::Message raw = socket.receive();
    ReceivedMessage received{decode(raw.bytes), std::move(raw.fds)};
    const bool carries_fds = received.message.type == ShareMessageType::pages;
    if (!carries_fds && !received.fds.empty()) {
        throw Error(Errc::corrupt_data, "page share protocol",
                    detail::concat("a ", to_string(received.message.type), " message carried ",
                                   received.fds.size(), " descriptors"));
    }
    if (carries_fds && received.fds.size() != received.message.physical_ids.size()) {
        throw Error(Errc::corrupt_data, "page share protocol",
                    detail::concat("a pages message announced ",
                                   received.message.physical_ids.size(), " pages and carried ",
                                   received.fds.size(), " descriptors"));
    }
    return received;
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
