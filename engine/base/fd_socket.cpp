#include "vtpage/base/fd_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage {
namespace {

// Every message starts with this header; the descriptors ride on its first byte.
struct Header {
    std::uint32_t magic;
    std::uint32_t fd_count;
    std::uint64_t byte_count;
};
constexpr std::uint32_t header_magic = 0x76747066;  // "vtpf"
// The body is read into memory that grows by this much as bytes arrive, so that a header
// announcing a large body costs nothing until the bytes come.
constexpr std::size_t receive_chunk = std::size_t(1) << 20;
using Clock = FdSocket::Clock;

// Waits until the socket is ready for `events` or the deadline passes (io_error then).
void wait_for(int fd, short events, Clock::time_point deadline, const char* operation) {
    for (;;) {
        int timeout_ms = -1;
        if (deadline != Clock::time_point::max()) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) {
                throw Error(Errc::io_error, operation,
                            "the peer did not complete the message by its deadline");
            }
            timeout_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
        }
        pollfd waiting{fd, events, 0};
        const int ready = ::poll(&waiting, 1, timeout_ms);
        if (ready > 0) return;
        if (ready < 0 && errno != EINTR) throw_errno(Errc::io_error, operation, "poll failed");
    }
}

sockaddr_un make_address(const std::string& path, const char* operation) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(address.sun_path)) {
        throw Error(Errc::invalid_argument, operation,
                    detail::concat("a socket path must have 1 to ", sizeof(address.sun_path) - 1,
                                   " characters"),
                    path);
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    return address;
}

void write_all(int fd, const void* data, std::size_t size, Clock::time_point deadline,
               const char* operation) {
    auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
        wait_for(fd, POLLOUT, deadline, operation);
        ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) throw_errno(Errc::io_error, operation, "the peer is gone or the send failed");
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
}

void read_all(int fd, void* data, std::size_t size, Clock::time_point deadline,
              const char* operation) {
    auto* bytes = static_cast<char*>(data);
    while (size > 0) {
        wait_for(fd, POLLIN, deadline, operation);
        ssize_t n = ::recv(fd, bytes, size, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n == 0) throw Error(Errc::io_error, operation, "the peer closed the connection");
        if (n < 0) throw_errno(Errc::io_error, operation, "receive failed");
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
}

// Reads a body of `size` bytes, growing the buffer only as the bytes arrive.
std::vector<std::byte> read_body(int fd, std::size_t size, Clock::time_point deadline,
                                 const char* operation) {
    std::vector<std::byte> body;
    while (body.size() < size) {
        const std::size_t at = body.size();
        body.resize(at + std::min(receive_chunk, size - at));
        read_all(fd, body.data() + at, body.size() - at, deadline, operation);
    }
    return body;
}

// Whether a process listens at the path now (a connect succeeds).
bool someone_listens(const sockaddr_un& address) {
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!probe) return false;
    return ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) ==
           0;
}

}  // namespace

std::pair<FdSocket, FdSocket> FdSocket::pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        throw_errno(Errc::io_error, "FdSocket::pair", "socketpair failed");
    }
    return {FdSocket(UniqueFd(fds[0])), FdSocket(UniqueFd(fds[1]))};
}

FdSocket FdSocket::listen(const std::string& path, int backlog) {
    sockaddr_un address = make_address(path, "FdSocket::listen");
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw_errno(Errc::io_error, "FdSocket::listen", "socket failed", path);
    // A socket left by an earlier run would make bind fail: remove it, but never anything
    // else that happens to sit at the path, and never a live listener's socket.
    struct stat existing {};
    if (::lstat(path.c_str(), &existing) == 0) {
        if (!S_ISSOCK(existing.st_mode)) {
            throw Error(Errc::invalid_argument, "FdSocket::listen",
                        "the path holds something other than a socket; not removing it", path);
        }
        if (someone_listens(address)) {
            throw Error(Errc::busy, "FdSocket::listen",
                        "another process listens on this path; not replacing its socket", path);
        }
        ::unlink(path.c_str());
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        throw_errno(Errc::io_error, "FdSocket::listen", "bind failed", path);
    }
    FdSocket listening(std::move(fd));
    struct stat bound {};
    if (::lstat(path.c_str(), &bound) == 0) {
        listening.bound_path_ = path;
        listening.bound_device_ = bound.st_dev;
        listening.bound_inode_ = bound.st_ino;
    }
    if (::listen(listening.fd(), backlog) != 0) {
        const int error_number = errno;
        listening.remove_listening_path();
        throw_errno_value(error_number, Errc::io_error, "FdSocket::listen", "listen failed", path);
    }
    return listening;
}

void FdSocket::remove_listening_path() const noexcept {
    if (bound_path_.empty()) return;
    // Another process may have replaced the file since: its socket is not ours to remove.
    struct stat now {};
    if (::lstat(bound_path_.c_str(), &now) != 0) return;
    if (now.st_dev == bound_device_ && now.st_ino == bound_inode_) ::unlink(bound_path_.c_str());
}

FdSocket::Credentials FdSocket::peer_credentials() const {
    ucred peer{};
    socklen_t size = sizeof(peer);
    if (::getsockopt(fd_.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
        throw_errno(Errc::io_error, "FdSocket::peer_credentials", "SO_PEERCRED failed");
    }
    return {peer.pid, peer.uid, peer.gid};
}

FdSocket FdSocket::connect(const std::string& path) {
    sockaddr_un address = make_address(path, "FdSocket::connect");
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw_errno(Errc::io_error, "FdSocket::connect", "socket failed", path);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        throw_errno(Errc::io_error, "FdSocket::connect", "connect failed", path);
    }
    return FdSocket(std::move(fd));
}

FdSocket FdSocket::accept() const {
    int fd;
    do {
        fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) throw_errno(Errc::io_error, "FdSocket::accept", "accept failed");
    return FdSocket(UniqueFd(fd));
}

void FdSocket::send(std::span<const std::byte> bytes, std::span<const int> fds,
                    Clock::time_point deadline) const {
    if (fds.size() > max_fds_per_message) {
        throw Error(Errc::invalid_argument, "FdSocket::send",
                    detail::concat("at most ", max_fds_per_message, " descriptors per message"),
                    detail::concat("fds=", fds.size()));
    }
    Header header{header_magic, static_cast<std::uint32_t>(fds.size()), bytes.size()};
    iovec io{&header, sizeof(header)};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    std::vector<char> control;
    if (!fds.empty()) {
        control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
        message.msg_control = control.data();
        message.msg_controllen = control.size();
        cmsghdr* cmsg = CMSG_FIRSTHDR(&message);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t sent;
    do {
        wait_for(fd_.get(), POLLOUT, deadline, "FdSocket::send");
        sent = ::sendmsg(fd_.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
    if (sent < 0) throw_errno(Errc::io_error, "FdSocket::send", "sendmsg failed");
    // The descriptors went with the first byte; the rest of the header and the body follow.
    auto header_bytes = reinterpret_cast<const char*>(&header);
    write_all(fd_.get(), header_bytes + sent, sizeof(header) - static_cast<std::size_t>(sent),
              deadline, "FdSocket::send");
    write_all(fd_.get(), bytes.data(), bytes.size(), deadline, "FdSocket::send");
}

FdSocket::Message FdSocket::receive(Clock::time_point deadline, std::size_t max_bytes) const {
    Header header{};
    iovec io{&header, sizeof(header)};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    std::vector<char> control(CMSG_SPACE(sizeof(int) * max_fds_per_message));
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t received;
    do {
        wait_for(fd_.get(), POLLIN, deadline, "FdSocket::receive");
        received = ::recvmsg(fd_.get(), &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (received < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
    if (received < 0) throw_errno(Errc::io_error, "FdSocket::receive", "recvmsg failed");
    if (received == 0) {
        throw Error(Errc::io_error, "FdSocket::receive", "the peer closed the connection");
    }
    Message result;
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&message); cmsg; cmsg = CMSG_NXTHDR(&message, cmsg)) {
        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
        std::size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
            result.fds.emplace_back(fd);
        }
    }
    if (message.msg_flags & MSG_CTRUNC) {
        throw Error(Errc::corrupt_data, "FdSocket::receive", "descriptors were truncated");
    }
    read_all(fd_.get(), reinterpret_cast<char*>(&header) + received,
             sizeof(header) - static_cast<std::size_t>(received), deadline, "FdSocket::receive");
    if (header.magic == header_magic && header.byte_count > max_bytes) {
        throw Error(Errc::corrupt_data, "FdSocket::receive",
                    detail::concat("the peer announced a ", header.byte_count,
                                   "-byte message; at most ", max_bytes, " are accepted here"));
    }
    if (header.magic != header_magic || header.byte_count > max_message_bytes ||
        header.fd_count != result.fds.size()) {
        throw Error(Errc::corrupt_data, "FdSocket::receive",
                    detail::concat("bad message header (magic ", header.magic, ", ",
                                   header.fd_count, " descriptors announced, ", result.fds.size(),
                                   " received, ", header.byte_count, " bytes)"));
    }
    result.bytes = read_body(fd_.get(), header.byte_count, deadline, "FdSocket::receive");
    return result;
}

}  // namespace vtpage
