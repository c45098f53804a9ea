// The stress tool's results: a Markdown table on stdout (one row per pattern, plus the total)
// with the latencies of each operation kind, and the same as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "stress_options.hpp"
#include "stress_run.hpp"

namespace vtpage::stress {

struct RunHeader {
    std::string backend;
    std::string device;
    std::size_t page_size = 0;
    std::uint64_t region_pages = 0;
    std::uint64_t budget_pages = 0;
    bool export_pages = false;
};

struct StressTotals {
    std::uint64_t ops = 0, verified = 0, commits = 0, evictions = 0, pool_hits = 0;
    std::uint64_t integrity_errors = 0, unexpected_errors = 0, faults_injected = 0;
    std::size_t leaked_bytes = 0, leaked_descriptors = 0;
    double seconds = 0;
    double worst_access_p99_us = 0;
    bool passed = true;
    double ops_per_second() const { return seconds > 0 ? double(ops) / seconds : 0.0; }
};
StressTotals totals_of(const std::vector<PatternResult>& results);

void print_report(std::FILE* out, const RunHeader& header, const StressOptions& options,
                  const std::vector<PatternResult>& results);
nlohmann::json report_json(const RunHeader& header, const StressOptions& options,
                           const std::vector<PatternResult>& results);

}  // namespace vtpage::stress
