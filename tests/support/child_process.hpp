// Tests that need a second process (fd import over a socket, a GPU fault that kills its
// context) run this same test binary again in a named child mode.
#pragma once

#include <string>
#include <vector>

namespace vtpage::test {

using ChildMain = int (*)(const std::vector<std::string>& arguments);

// Registers a child mode; use VTPAGE_CHILD_MODE below.
bool register_child_mode(const char* name, ChildMain main);

// Runs a registered child mode if argv asks for one ("--vtpage-child <mode> args...").
// Returns true and sets exit_code when it did.
bool run_child_mode_if_asked(int argc, char** argv, int& exit_code);

struct ChildResult {
    int exit_code = -1;    // -1 when killed by a signal
    int signal = 0;
    std::string output;    // stdout and stderr together
};

// Starts the child mode; inherited_fd (if >= 0) appears in the child as descriptor 3.
// Waits at most timeout_seconds, then kills the child and reports signal 9.
ChildResult run_child(const std::string& mode, const std::vector<std::string>& arguments,
                      int inherited_fd = -1, int timeout_seconds = 60);

}  // namespace vtpage::test

#define VTPAGE_CHILD_MODE(name, function) \
    static const bool vtpage_child_mode_##function = \
        ::vtpage::test::register_child_mode(name, function)
