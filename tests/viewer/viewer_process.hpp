// Runs vtpage-viewer (or xvfb-run around it) as a child process, for the tests of the program
// itself: its exit status and everything it printed.
#pragma once

#include <string>
#include <vector>

namespace vtpage::test {

struct ProgramResult {
    int exit_code = -1;  // -1: killed by a signal (or the timeout)
    int signal = 0;
    std::string output;  // stdout and stderr together
};

// The viewer next to this test binary (../demos/viewer/vtpage-viewer, the same layout in every
// build folder), or $VTPAGE_VIEWER.
std::string viewer_path();
// An executable found on PATH, or empty.
std::string find_program(const std::string& name);

// Runs argv[0] with argv, without the variables named in `unset` (DISPLAY...), and kills it after
// timeout_seconds.
ProgramResult run_program(const std::vector<std::string>& argv,
                          const std::vector<std::string>& unset = {}, int timeout_seconds = 300);

}  // namespace vtpage::test
