// Another process that takes device memory for a while: vtpage-gpu-pressure, started by the
// memory-pressure benchmark (--pressure-mib) to show the streaming governor giving memory back
// and taking it again. The process is told to release through its stdin and never outlives
// this object: it also ends when its stdin closes, and on SIGTERM when the viewer dies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "vtpage/base/unique_fd.hpp"

namespace vtpage::viewer {

struct PressureSettings {
    std::string tool;  // the program's path
    int device = 0;
    std::size_t mib = 0;             // what it takes; or, when 0:
    std::size_t leave_free_mib = 0;  // it takes all but this much of the device's free memory
    double hold_seconds = 60;        // its own deadline, should this object never release it
};

class PressureProcess {
public:
    // Starts the program; Error (io_error) when it cannot be started.
    explicit PressureProcess(const PressureSettings& settings);
    // release(), then waits for it to end (a few seconds at most) and kills it if it does not.
    ~PressureProcess();
    PressureProcess(const PressureProcess&) = delete;
    PressureProcess& operator=(const PressureProcess&) = delete;

    // Asks it to free its memory and end (does not wait).
    void release() noexcept;
    // Waits up to `timeout` for it to end; its exit status, or -1 while it still runs.
    int wait(std::chrono::milliseconds timeout) noexcept;

private:
    pid_t pid_ = -1;
    UniqueFd input_;  // its stdin
    int status_ = -1;
};

// vtpage-gpu-pressure beside the running viewer (installed) or in the build tree; empty when
// neither is there.
std::string find_pressure_tool();

}  // namespace vtpage::viewer
