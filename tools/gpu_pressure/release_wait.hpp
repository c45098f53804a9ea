// What ends the hold of vtpage-gpu-pressure, whichever comes first: the deadline, a line
// "release" or the end of stdin (a parent that dies closes it), or SIGTERM / SIGINT (sent too
// when the parent dies: PR_SET_PDEATHSIG). Every wait has the deadline, so that no run can hang.
#pragma once

#include <chrono>

namespace vtpage::gpu_pressure {

enum class Release { deadline, release_line, stdin_closed, signal };

const char* to_string(Release reason) noexcept;

// SIGTERM and SIGINT set a flag instead of ending the process (so that the memory is freed and
// "released" printed), SIGPIPE is ignored (a parent gone does not kill us mid-free), and the
// process gets SIGTERM when its parent dies.
void install_release_signals();
// Whether SIGTERM or SIGINT came.
bool signalled() noexcept;

// Waits for one of the reasons above until `deadline`.
Release wait_for_release(std::chrono::steady_clock::time_point deadline);

}  // namespace vtpage::gpu_pressure
