// The stress tool's settings, from its command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "page_pattern.hpp"

namespace vtpage::stress {

struct StressOptions {
    std::string backend = "auto";
    std::size_t va_gib = 1024;          // the region the pages live in
    std::size_t budget_mib = 256;       // the table's budget
    std::vector<PatternKind> patterns;  // run one after another
    double zipf_skew = 0.99;
    int threads = 4;
    double seconds = 0;     // per pattern; 0: until --ops
    std::uint64_t ops = 0;  // page operations per pattern; 0: until --seconds
    std::uint64_t seed = 1;
    std::string inject_faults;  // a FaultInjectingBackend spec
    std::string json;           // where to write the JSON report
    std::size_t batch = 4;      // pages per operation
    std::size_t stamp_stride = std::size_t{64} * 1024;
    std::optional<bool> export_pages;  // unset: when the backend can
    double frame_ms = 0;               // frame fences: begin a frame this often (0: no frames)
    double check_ms = 100;             // check the table's invariants this often
    std::optional<std::size_t> release_threshold_mib;  // the pool's; unset: budget + 25%
    bool progress = true;
    std::size_t device_memory_tolerance_mib = 0;  // leak check: free device memory may be this
                                                  // much below the baseline (sanitizers)
    std::uint64_t corrupt_every = 0;  // self-test: corrupt a stamp every N accesses of thread 0
};

// Parses argv. Returns the options, or the exit code to leave with (0 after --help, 2 with a
// message on stderr for bad flags).
struct ParsedOptions {
    std::optional<StressOptions> options;
    int exit_code = 0;
};
ParsedOptions parse_options(int argc, char** argv);

}  // namespace vtpage::stress
