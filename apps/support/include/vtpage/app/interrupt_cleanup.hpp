// SIGINT and SIGTERM for the programs that write files: the partial files registered at the time
// are removed, "<program>: interrupted by SIGINT (partial output removed)" goes to stderr and the
// program exits 1 (the work did not finish), so that a stopped run leaves nothing behind.
//
// A thread of its own waits for the signals (sigwait) and only unlinks and writes; the paths are
// held in a fixed set of slots, so that registering allocates nothing it could see half made.
#pragma once

#include <string>

namespace vtpage::app {

inline constexpr int interrupted_exit_status = 1;

// Blocks SIGINT and SIGTERM and starts the thread that waits for them. Call once, before the
// program starts a thread (threads inherit the blocked signals) and before any partial file exists.
void remove_partial_files_on_interrupt(const char* program);

// Removes `path` if the program is interrupted while this object lives; after finish() (the file
// was renamed into place, or removed by its writer) it no longer does. At most 16 at once.
class PartialFileGuard {
public:
    explicit PartialFileGuard(const std::string& path);
    ~PartialFileGuard();
    PartialFileGuard(const PartialFileGuard&) = delete;
    PartialFileGuard& operator=(const PartialFileGuard&) = delete;

    void finish() noexcept;

private:
    int slot_ = -1;
};

}  // namespace vtpage::app
