#include "release_wait.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string>

namespace vtpage::gpu_pressure {

namespace {

volatile std::sig_atomic_t signal_seen = 0;

extern "C" void on_signal(int) { signal_seen = 1; }

// A signal that lands between the flag check and poll() is seen at the next slice at the latest.
constexpr int slice_ms = 100;

// Reads what stdin has; returns false at its end (or a read error). Appends whole lines to
// `line` and sets `release` when one of them is "release".
bool read_stdin(std::string& line, bool& release) {
    char buffer[256];
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof(buffer));
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    for (ssize_t i = 0; i < n; ++i) {
        if (buffer[i] != '\n') {
            if (line.size() < 64) line += buffer[i];  // a longer line is not "release" anyway
            continue;
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "release") release = true;
        line.clear();
    }
    return true;
}

}  // namespace

const char* to_string(Release reason) noexcept {
    switch (reason) {
        case Release::deadline:
            return "the hold time passed";
        case Release::release_line:
            return "'release' read on stdin";
        case Release::stdin_closed:
            return "stdin closed";
        case Release::signal:
            return "a signal to end";
    }
    return "?";
}

void install_release_signals() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: poll() returns at once with EINTR
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
}

bool signalled() noexcept { return signal_seen != 0; }

Release wait_for_release(std::chrono::steady_clock::time_point deadline) {
    using namespace std::chrono;
    std::string line;
    bool release = false;
    while (true) {
        if (signalled()) return Release::signal;
        const auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
        if (left <= 0) return Release::deadline;
        pollfd input{STDIN_FILENO, POLLIN, 0};
        const int timeout = int(std::min<long long>(left, slice_ms));
        const int ready = ::poll(&input, 1, timeout);
        if (ready <= 0) continue;  // a slice passed, or a signal (EINTR)
        if (input.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
            if (!read_stdin(line, release)) return Release::stdin_closed;
            if (release) return Release::release_line;
        }
    }
}

}  // namespace vtpage::gpu_pressure
