#include "scene/child_output.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace vtpage::viewer {

ChildOutput read_child_output(int fd, std::chrono::steady_clock::time_point until,
                              std::uint64_t most, std::vector<std::uint8_t>& output) {
    std::uint8_t buffer[1 << 16];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0) return ChildOutput::late;
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, int(std::min<std::int64_t>(left.count(), 1 << 30)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;  // the loop's deadline check ends it
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return ChildOutput::whole;
        if (output.size() + std::size_t(got) > most) return ChildOutput::too_long;
        output.insert(output.end(), buffer, buffer + got);
    }
}

}  // namespace vtpage::viewer
