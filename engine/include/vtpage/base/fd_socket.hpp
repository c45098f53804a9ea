// A connected Unix domain stream socket that carries byte messages together with file
// descriptors (SCM_RIGHTS). Pages cross process boundaries this way: the exported fd of a
// physical page travels beside a small message that says what it is.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vtpage/base/error.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage {

class FdSocket {
public:
    using Clock = std::chrono::steady_clock;
    // The most descriptors one message carries.
    static constexpr std::size_t max_fds_per_message = 250;
    // The largest message body receive() accepts unless told a smaller limit.
    static constexpr std::size_t max_message_bytes = std::size_t(1) << 30;

    FdSocket() = default;
    explicit FdSocket(UniqueFd fd) : fd_(std::move(fd)) {}

    // Two connected ends, e.g. one kept by a parent and one handed to a child.
    static std::pair<FdSocket, FdSocket> pair();
    // Listens on a filesystem path. A socket left there by a process that is gone is removed
    // first; busy when a live listener answers there (it is never replaced), invalid_argument
    // when the path holds something other than a socket.
    static FdSocket listen(const std::string& path, int backlog = 8);
    // Removes the path listen() bound, if it is still this socket's (not a later listener's).
    void remove_listening_path() const noexcept;
    static FdSocket connect(const std::string& path);
    FdSocket accept() const;

    // The peer's process and user, as the kernel saw them at connect (SO_PEERCRED).
    struct Credentials {
        pid_t pid = 0;
        uid_t uid = 0;
        gid_t gid = 0;
    };
    Credentials peer_credentials() const;

    // Sends one message: its bytes and up to max_fds_per_message descriptors (not closed).
    // io_error when the whole message is not out by the deadline: a peer that reads slowly
    // cannot stretch it.
    void send(std::span<const std::byte> bytes, std::span<const int> fds = {},
              Clock::time_point deadline = Clock::time_point::max()) const;
    struct Message {
        std::vector<std::byte> bytes;
        std::vector<UniqueFd> fds;
    };
    // Receives one whole message; io_error when the peer has gone or the message is not
    // complete by the deadline (however the peer trickles it), corrupt_data when it announces
    // more than max_bytes (refused before anything is allocated for it). Memory follows the
    // bytes that arrive, not the size announced.
    Message receive(Clock::time_point deadline = Clock::time_point::max(),
                    std::size_t max_bytes = max_message_bytes) const;

    int fd() const noexcept { return fd_.get(); }
    UniqueFd release() { return std::move(fd_); }

private:
    UniqueFd fd_;
    std::string bound_path_;  // listen()'s path, and the socket file's identity there
    dev_t bound_device_ = 0;
    ino_t bound_inode_ = 0;
};

}  // namespace vtpage
