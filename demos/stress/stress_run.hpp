// One pattern's run, start to finish: a page table over the backend (behind a fault injector
// when faults are asked for), the workers and the monitor, then the final checks: every
// resident page's stamps, the callbacks' story against the table, the table's invariants
// against the backend, teardown, and the leak check against the baseline taken before the
// table was made.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "page_pattern.hpp"
#include "page_verifier.hpp"
#include "run_stats.hpp"
#include "stress_options.hpp"
#include "vtpage/backend/leak_check.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::stress {

struct PatternResult {
    PatternKind kind = PatternKind::uniform;
    double seconds = 0;
    std::uint64_t ops = 0, accessed = 0, verified = 0, stamped = 0, prefetched = 0, evicted = 0;
    std::uint64_t integrity_errors = 0, unexpected_errors = 0, invariant_checks = 0;
    std::uint64_t refused_busy = 0, refused_budget = 0, refused_not_resident = 0;
    std::uint64_t refused_injected = 0;
    std::uint64_t faults_injected = 0;
    std::uint64_t exports = 0;
    std::uint64_t swept_pages = 0;  // resident pages checked after the workers stopped
    std::array<LatencySummary, all_op_kinds.size()> latency{};
    PageTableStatistics table;  // at the end of the run, before teardown
    LeakReport leaks;
    std::size_t open_exports_after_teardown = 0;
    std::vector<std::string> problems;

    double ops_per_second() const { return seconds > 0 ? double(ops) / seconds : 0.0; }
    std::size_t leaked_bytes() const { return leaks.leaked_bytes(); }
    std::size_t leaked_descriptors() const {
        return leaks.leaked_descriptors() + open_exports_after_teardown;
    }
    bool leak_free() const { return leaks.clean() && open_exports_after_teardown == 0; }
    bool passed() const { return integrity_errors == 0 && unexpected_errors == 0 && leak_free(); }
};

class StressRun {
public:
    // The backend must outlive the run; one verifier per worker thread.
    StressRun(Backend& backend, const StressOptions& options,
              std::vector<std::unique_ptr<PageVerifier>>& verifiers);
    PatternResult run(PatternKind kind, const std::string& label);

private:
    // A short pass over a region like the run's, before the first baseline: the driver grows
    // some structures lazily (page-table pools, staging buffers), and they belong to the
    // baseline, not to the run.
    void warm_up(const PageTableSettings& settings);

    Backend& backend_;
    bool warm_ = false;
    const StressOptions& options_;
    std::vector<std::unique_ptr<PageVerifier>>& verifiers_;
};

}  // namespace vtpage::stress
