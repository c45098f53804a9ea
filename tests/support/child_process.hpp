// Tests that need a second process (fd import over a socket, a GPU fault that kills its
// context) run this same test binary again in a named child mode.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vtpage::test {

using ChildMain = int (*)(const std::vector<std::string>& arguments);

// Registers a child mode; use VTPAGE_CHILD_MODE below.
bool register_child_mode(const char* name, ChildMain main);

// Runs a registered child mode if argv asks for one ("--vtpage-child <mode> args...").
// Returns true and sets exit_code when it did.
bool run_child_mode_if_asked(int argc, char** argv, int& exit_code);

struct ChildResult {
    int exit_code = -1;  // -1 when killed by a signal
    int signal = 0;
    std::string output;  // stdout and stderr together
};

// Starts the child mode; inherited_fd (if >= 0) appears in the child as descriptor 3.
// Waits at most timeout_seconds, then kills the child and reports signal 9.
ChildResult run_child(const std::string& mode, const std::vector<std::string>& arguments,
                      int inherited_fd = -1, int timeout_seconds = 60);

// A child mode that runs beside the test, for protocols that need both sides at once (and a
// side killed midway). Its output is collected as it comes.
class ChildProcess {
public:
    // inherited_fd (if >= 0) appears in the child as descriptor 3.
    ChildProcess(const std::string& mode, const std::vector<std::string>& arguments,
                 int inherited_fd = -1);
    // Kills a child still running and reaps it.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    int pid() const noexcept { return pid_; }
    void kill(int signal);
    // Waits until the output contains text; false on timeout or when the child ended first.
    bool wait_for_output(const std::string& text, int timeout_seconds = 30);
    // Waits for the end (killing the child after timeout_seconds) and returns what it printed.
    ChildResult wait(int timeout_seconds = 60);
    std::string output() const;

private:
    int pid_ = -1;
    bool reaped_ = false;
    ChildResult result_;
    mutable std::mutex mutex_;
    std::condition_variable output_changed_;
    std::string output_;
    bool output_closed_ = false;
    std::thread reader_;
};

}  // namespace vtpage::test

#define VTPAGE_CHILD_MODE(name, function)            \
    static const bool vtpage_child_mode_##function = \
        ::vtpage::test::register_child_mode(name, function)
