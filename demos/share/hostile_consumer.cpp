#include "hostile_consumer.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "vtpage/base/fd_socket.hpp"

namespace vtpage::share_demo {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// FdSocket's frame header, as a hostile peer writes it by hand.
struct RawHeader {
    std::uint32_t magic = 0x76747066;
    std::uint32_t fd_count = 0;
    std::uint64_t byte_count = 0;
};

bool send_bytes(int fd, const void* data, std::size_t size) {
    return ::send(fd, data, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// Reads and drops whatever arrives within `wait` (fds are closed); false at EOF or an error.
bool drain(int fd, std::chrono::milliseconds wait) {
    pollfd waiting{fd, POLLIN, 0};
    if (::poll(&waiting, 1, static_cast<int>(wait.count())) <= 0) return true;
    char bytes[65536];
    char control[CMSG_SPACE(sizeof(int) * FdSocket::max_fds_per_message)];
    iovec io{bytes, sizeof(bytes)};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const auto* fds = reinterpret_cast<const int*>(CMSG_DATA(c));
        for (std::size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
            ::close(fds[i]);
        }
    }
    return n > 0;
}

// Misbehaves until the producer hangs up or time runs out; whether it hung up.
bool misbehave(int fd, HostileKind kind, Clock::time_point end) {
    RawHeader header;
    header.byte_count = kind == HostileKind::huge_frame ? std::uint64_t(1) << 30 : 100;
    const auto* header_bytes = reinterpret_cast<const char*>(&header);
    if (kind == HostileKind::huge_frame && !send_bytes(fd, &header, sizeof(header))) return true;
    std::size_t trickled = 0;
    while (Clock::now() < end) {
        if (kind == HostileKind::trickle) {
            const char byte = trickled < sizeof(header) ? header_bytes[trickled] : '\0';
            if (!send_bytes(fd, &byte, 1)) return true;
            ++trickled;
        }
        // Reading (and dropping) keeps the producer's sends flowing: these peers attack with
        // what they send, or do not send.
        if (!drain(fd, kind == HostileKind::trickle ? 500ms : 50ms)) return true;
    }
    return false;
}

}  // namespace

std::optional<HostileKind> hostile_kind(const std::string& name) {
    if (name == "trickle") return HostileKind::trickle;
    if (name == "never-ack") return HostileKind::never_ack;
    if (name == "huge-frame") return HostileKind::huge_frame;
    return std::nullopt;
}

const char* to_string(HostileKind kind) noexcept {
    switch (kind) {
        case HostileKind::trickle:
            return "trickle";
        case HostileKind::never_ack:
            return "never-ack";
        case HostileKind::huge_frame:
            return "huge-frame";
    }
    return "unknown";
}

int run_hostile_consumer(const std::string& socket, HostileKind kind, double seconds) {
    const auto start = Clock::now();
    const auto end =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    FdSocket connection;
    while (connection.fd() < 0) {
        try {
            connection = FdSocket::connect(socket);
        } catch (const Error& error) {
            if (Clock::now() > end) {
                std::printf("hostile %s %d: could not connect: %s\n", to_string(kind), getpid(),
                            error.what());
                return 1;
            }
            std::this_thread::sleep_for(50ms);
        }
    }
    const bool cut_off = misbehave(connection.fd(), kind, end);
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("hostile %s %d: %s after %.1f s\n", to_string(kind), getpid(),
                cut_off ? "cut off by the producer" : "still served", took);
    std::fflush(stdout);
    return cut_off ? 0 : 1;
}

}  // namespace vtpage::share_demo
