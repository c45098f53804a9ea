#include "vtpage/streaming/io/file_layer.hpp"

#include <unistd.h>

#include <cerrno>

namespace vtpage::vt {

ReadDecision FileLayer::decide(const ReadAttempt&) { return ReadDecision::pass(); }

std::int64_t FileLayer::read(int fd, void* destination, std::size_t size, std::uint64_t offset) {
    const ssize_t result = ::pread(fd, destination, size, off_t(offset));
    return result < 0 ? -std::int64_t(errno) : std::int64_t(result);
}

std::int64_t FileLayer::kernel_result(const ReadAttempt&, std::int64_t result) { return result; }

FileLayer& system_file_layer() {
    static FileLayer layer;  // stateless: shared by every queue
    return layer;
}

}  // namespace vtpage::vt
