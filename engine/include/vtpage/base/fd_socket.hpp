// A connected Unix domain stream socket that carries byte messages together with file
// descriptors (SCM_RIGHTS). Pages cross process boundaries this way: the exported fd of a
// physical page travels beside a small message that says what it is.
#pragma once

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
    // The most descriptors one message carries.
    static constexpr std::size_t max_fds_per_message = 250;

    FdSocket() = default;
    explicit FdSocket(UniqueFd fd) : fd_(std::move(fd)) {}

    // Two connected ends, e.g. one kept by a parent and one handed to a child.
    static std::pair<FdSocket, FdSocket> pair();
    // Listens on a filesystem path (removed first if it is a stale socket).
    static FdSocket listen(const std::string& path, int backlog = 8);
    static FdSocket connect(const std::string& path);
    FdSocket accept() const;

    // Sends one message: its bytes and up to max_fds_per_message descriptors (not closed).
    void send(std::span<const std::byte> bytes, std::span<const int> fds = {}) const;
    struct Message {
        std::vector<std::byte> bytes;
        std::vector<UniqueFd> fds;
    };
    // Receives one whole message; io_error when the peer has gone.
    Message receive() const;

    int fd() const noexcept { return fd_.get(); }
    UniqueFd release() { return std::move(fd_); }

private:
    UniqueFd fd_;
};

}  // namespace vtpage
