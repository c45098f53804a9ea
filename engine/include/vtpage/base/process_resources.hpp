// What the process holds from the kernel right now: its open descriptors (/proc/self/fd) and
// its memory mappings (/proc/self/maps). Two snapshots, before and after some work, show what
// the work left behind: the host half of a leak check (LeakCheck in the backend layer adds the
// backend's own accounting and the device's free memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vtpage {

struct OpenDescriptor {
    int fd = -1;
    std::string target;  // what the link points at: a path, "socket:[...]", "/memfd:... (deleted)"
};

struct MappedRange {
    std::uint64_t start = 0;
    std::uint64_t end = 0;    // one past the last byte
    std::string permissions;  // "rw-p", "---p", ...
    std::string path;         // empty for anonymous memory
    std::size_t size() const noexcept { return static_cast<std::size_t>(end - start); }
};

struct ProcessResources {
    std::vector<OpenDescriptor> descriptors;  // by fd number
    std::vector<MappedRange> mappings;        // by address
};

// Reads /proc/self/fd (without the descriptor used to read it) and /proc/self/maps. io_error
// when /proc is not there.
ProcessResources snapshot_process_resources();

// What `after` holds that `before` did not.
struct ProcessResourceGrowth {
    // Descriptors whose number was not open before, or now points elsewhere.
    std::vector<OpenDescriptor> descriptors;
    // The parts of after's mappings that no mapping of before covered with the same
    // permissions and path (a grown heap counts with its growth only).
    std::vector<MappedRange> mappings;
    std::size_t mapped_bytes = 0;
    bool empty() const noexcept { return descriptors.empty() && mappings.empty(); }
};
ProcessResourceGrowth growth_between(const ProcessResources& before, const ProcessResources& after);

// "fd 7 -> /memfd:x (deleted)" and "7f00..-7f01.. rw-p 2 MiB /path" lines, at most `limit`
// of each, for messages.
std::string describe(const ProcessResourceGrowth& growth, std::size_t limit = 8);

}  // namespace vtpage
