#include "vtpage/base/fd_socket.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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
constexpr std::uint64_t max_message_bytes = 1ull << 30;

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

void write_all(int fd, const void* data, std::size_t size, const char* operation) {
    auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw_errno(Errc::io_error, operation, "the peer is gone or the send failed");
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
}

void read_all(int fd, void* data, std::size_t size, const char* operation) {
    auto* bytes = static_cast<char*>(data);
    while (size > 0) {
        ssize_t n = ::recv(fd, bytes, size, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) throw Error(Errc::io_error, operation, "the peer closed the connection");
        if (n < 0) throw_errno(Errc::io_error, operation, "receive failed");
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
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
    // else that happens to sit at the path.
    struct stat existing {};
    if (::lstat(path.c_str(), &existing) == 0) {
        if (!S_ISSOCK(existing.st_mode)) {
            throw Error(Errc::invalid_argument, "FdSocket::listen",
                        "the path holds something other than a socket; not removing it", path);
        }
        ::unlink(path.c_str());
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
        throw_errno(Errc::io_error, "FdSocket::listen", "bind failed", path);
    }
    if (::listen(fd.get(), backlog) != 0) {
        throw_errno(Errc::io_error, "FdSocket::listen", "listen failed", path);
    }
    return FdSocket(std::move(fd));
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

void FdSocket::send(std::span<const std::byte> bytes, std::span<const int> fds) const {
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
        sent = ::sendmsg(fd_.get(), &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) throw_errno(Errc::io_error, "FdSocket::send", "sendmsg failed");
    // The descriptors went with the first byte; the rest of the header and the body follow.
    auto header_bytes = reinterpret_cast<const char*>(&header);
    write_all(fd_.get(), header_bytes + sent, sizeof(header) - static_cast<std::size_t>(sent),
              "FdSocket::send");
    write_all(fd_.get(), bytes.data(), bytes.size(), "FdSocket::send");
}

FdSocket::Message FdSocket::receive() const {
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
        received = ::recvmsg(fd_.get(), &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
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
             sizeof(header) - static_cast<std::size_t>(received), "FdSocket::receive");
    if (header.magic != header_magic || header.byte_count > max_message_bytes ||
        header.fd_count != result.fds.size()) {
        throw Error(Errc::corrupt_data, "FdSocket::receive",
                    detail::concat("bad message header (magic ", header.magic, ", ",
                                   header.fd_count, " descriptors announced, ",
                                   result.fds.size(), " received, ", header.byte_count,
                                   " bytes)"));
    }
    result.bytes.resize(header.byte_count);
    read_all(fd_.get(), result.bytes.data(), result.bytes.size(), "FdSocket::receive");
    return result;
}

}  // namespace vtpage
