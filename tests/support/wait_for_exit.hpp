// Waiting for a child process with a deadline: a child that hangs fails its test instead of
// holding the suite until CTest's timeout.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

namespace vtpage::test {

// The child's wait status once it ends within `timeout`; otherwise the child is killed, reaped,
// and the answer is empty.
inline std::optional<int> wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) return status;
        if (done < 0 && errno != EINTR) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return std::nullopt;
}

// Kills and reaps a child that a failed assertion leaves behind.
inline void kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    wait_for_exit(pid, std::chrono::seconds(10));
}

}  // namespace vtpage::test
