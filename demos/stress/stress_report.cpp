#include "stress_report.hpp"

#include <algorithm>

namespace vtpage::stress {

namespace {

std::string number(double value, int digits = 0) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", digits, value);
    return text;
}

std::string count(std::uint64_t value) { return std::to_string(value); }

void row(std::FILE* out, const std::vector<std::string>& cells) {
    std::fputs("|", out);
    for (const auto& cell : cells) std::fprintf(out, " %s |", cell.c_str());
    std::fputs("\n", out);
}

void header_row(std::FILE* out, const std::vector<std::string>& cells) {
    row(out, cells);
    std::fputs("|", out);
    for (std::size_t i = 0; i < cells.size(); ++i) std::fputs(" --- |", out);
    std::fputs("\n", out);
}

nlohmann::json latency_json(const LatencySummary& s) {
    return {{"count", s.count},
            {"p50_us", s.p50_us},
            {"p99_us", s.p99_us},
            {"max_us", s.max_us},
            {"mean_us", s.mean_us}};
}

const LatencySummary& latency_of(const PatternResult& r, OpKind kind) {
    return r.latency[static_cast<std::size_t>(kind)];
}

}  // namespace

StressTotals totals_of(const std::vector<PatternResult>& results) {
    StressTotals t;
    for (const PatternResult& r : results) {
        t.ops += r.ops;
        t.verified += r.verified;
        t.commits += r.table.commits;
        t.evictions += r.table.evictions;
        t.pool_hits += r.table.pool.hits;
        t.integrity_errors += r.integrity_errors;
        t.unexpected_errors += r.unexpected_errors;
        t.faults_injected += r.faults_injected;
        t.leaked_bytes += r.leaked_bytes();
        t.leaked_descriptors += r.leaked_descriptors();
        t.seconds += r.seconds;
        t.worst_access_p99_us =
            std::max(t.worst_access_p99_us, latency_of(r, OpKind::access).p99_us);
        t.passed = t.passed && r.passed();
    }
    return t;
}

void print_report(std::FILE* out, const RunHeader& h, const StressOptions& o,
                  const std::vector<PatternResult>& results) {
    std::fprintf(out,
                 "\n## vtpage-stress: %s backend (%s), %d threads, batch %zu, region %zu GiB "
                 "(%llu pages), budget %zu MiB (%llu pages)%s%s\n\n",
                 h.backend.c_str(), h.device.c_str(), o.threads, o.batch, o.va_gib,
                 static_cast<unsigned long long>(h.region_pages), o.budget_mib,
                 static_cast<unsigned long long>(h.budget_pages),
                 h.export_pages ? ", pages exported" : "",
                 o.inject_faults.empty() ? "" : (", faults " + o.inject_faults).c_str());
    header_row(out, {"pattern", "ops", "ops/s", "verified", "commits", "evictions", "pool hits",
                     "faults injected", "refused", "integrity errors", "unexpected errors",
                     "leaked bytes", "leaked fds"});
    for (const PatternResult& r : results) {
        const std::uint64_t refused =
            r.refused_busy + r.refused_budget + r.refused_not_resident + r.refused_injected;
        row(out, {std::string(to_string(r.kind)), count(r.ops), number(r.ops_per_second()),
                  count(r.verified), count(r.table.commits), count(r.table.evictions),
                  count(r.table.pool.hits), count(r.faults_injected), count(refused),
                  count(r.integrity_errors), count(r.unexpected_errors), count(r.leaked_bytes()),
                  count(r.leaked_descriptors())});
    }
    const StressTotals t = totals_of(results);
    if (results.size() > 1) {
        row(out, {"**total**", count(t.ops), number(t.ops_per_second()), count(t.verified),
                  count(t.commits), count(t.evictions), count(t.pool_hits),
                  count(t.faults_injected), "", count(t.integrity_errors),
                  count(t.unexpected_errors), count(t.leaked_bytes), count(t.leaked_descriptors)});
    }
    std::fprintf(out,
                 "\nLatency per operation (us; an access is a batch: commit and pin, "
                 "verify, unpin):\n\n");
    header_row(out, {"pattern", "operation", "count", "p50", "p99", "max"});
    for (const PatternResult& r : results) {
        for (OpKind kind : all_op_kinds) {
            const LatencySummary& s = latency_of(r, kind);
            if (s.count == 0) continue;
            row(out, {std::string(to_string(r.kind)), std::string(to_string(kind)), count(s.count),
                      number(s.p50_us, 1), number(s.p99_us, 1), number(s.max_us, 1)});
        }
        const LatencySummary& commit = r.table.commit_latency;
        const LatencySummary& evict = r.table.evict_latency;
        if (commit.count) {
            row(out,
                {std::string(to_string(r.kind)), "commit per page (table)", count(commit.count),
                 number(commit.p50_us, 1), number(commit.p99_us, 1), number(commit.max_us, 1)});
        }
        if (evict.count) {
            row(out, {std::string(to_string(r.kind)), "evict per page (table)", count(evict.count),
                      number(evict.p50_us, 1), number(evict.p99_us, 1), number(evict.max_us, 1)});
        }
    }
    bool any_problem = false;
    for (const PatternResult& r : results) {
        for (const std::string& problem : r.problems) {
            if (!any_problem) std::fprintf(out, "\nProblems:\n");
            any_problem = true;
            std::fprintf(out, "- %s: %s\n", std::string(to_string(r.kind)).c_str(),
                         problem.c_str());
        }
    }
    std::fprintf(out,
                 "\n%s: %llu page operations, %llu faults injected, %llu integrity errors, "
                 "%zu leaked bytes, %zu leaked descriptors, %llu unexpected errors\n",
                 t.passed ? "PASS" : "FAIL", static_cast<unsigned long long>(t.ops),
                 static_cast<unsigned long long>(t.faults_injected),
                 static_cast<unsigned long long>(t.integrity_errors), t.leaked_bytes,
                 t.leaked_descriptors, static_cast<unsigned long long>(t.unexpected_errors));
}

nlohmann::json report_json(const RunHeader& h, const StressOptions& o,
                           const std::vector<PatternResult>& results) {
    const StressTotals t = totals_of(results);
    nlohmann::json patterns = nlohmann::json::array();
    for (const PatternResult& r : results) {
        nlohmann::json latency;
        for (OpKind kind : all_op_kinds) {
            latency[std::string(to_string(kind))] = latency_json(latency_of(r, kind));
        }
        latency["commit_per_page"] = latency_json(r.table.commit_latency);
        latency["evict_per_page"] = latency_json(r.table.evict_latency);
        patterns.push_back({
            {"pattern", std::string(to_string(r.kind))},
            {"seconds", r.seconds},
            {"ops", r.ops},
            {"ops_per_second", r.ops_per_second()},
            {"accessed", r.accessed},
            {"verified", r.verified},
            {"stamped", r.stamped},
            {"prefetched", r.prefetched},
            {"evicted_by_hand", r.evicted},
            {"swept_pages", r.swept_pages},
            {"commits", r.table.commits},
            {"evictions", r.table.evictions},
            {"pool_hits", r.table.pool.hits},
            {"pool_creates", r.table.pool.creates},
            {"pool_releases", r.table.pool.releases},
            {"requests", r.table.requests},
            {"request_hits", r.table.hits},
            {"failed_batches", r.table.failed_batches},
            {"out_of_memory_retries", r.table.out_of_memory_retries},
            {"exports", r.exports},
            {"faults_injected", r.faults_injected},
            {"refused",
             {{"busy", r.refused_busy},
              {"budget_exhausted", r.refused_budget},
              {"not_resident", r.refused_not_resident},
              {"injected_fault", r.refused_injected}}},
            {"invariant_checks", r.invariant_checks},
            {"integrity_errors", r.integrity_errors},
            {"unexpected_errors", r.unexpected_errors},
            {"leaked_bytes", r.leaked_bytes()},
            {"leaked_descriptors", r.leaked_descriptors()},
            {"leaks", r.leaks.describe()},
            {"device_free_before", r.leaks.device_before.free},
            {"device_free_after", r.leaks.device_after.free},
            {"p50_us", latency_of(r, OpKind::access).p50_us},
            {"p99_us", latency_of(r, OpKind::access).p99_us},
            {"latency", latency},
            {"problems", r.problems},
            {"passed", r.passed()},
        });
    }
    return {
        {"tool", "vtpage-stress"},
        {"backend", h.backend},
        {"device", h.device},
        {"page_size", h.page_size},
        {"settings",
         {{"va_gib", o.va_gib},
          {"budget_mib", o.budget_mib},
          {"region_pages", h.region_pages},
          {"budget_pages", h.budget_pages},
          {"threads", o.threads},
          {"batch", o.batch},
          {"seconds", o.seconds},
          {"ops", o.ops},
          {"seed", o.seed},
          {"zipf_skew", o.zipf_skew},
          {"stamp_stride", o.stamp_stride},
          {"inject_faults", o.inject_faults},
          {"export_pages", h.export_pages},
          {"frame_ms", o.frame_ms}}},
        {"ops", t.ops},
        {"seconds", t.seconds},
        {"ops_per_second", t.ops_per_second()},
        {"verified", t.verified},
        {"commits", t.commits},
        {"evictions", t.evictions},
        {"pool_hits", t.pool_hits},
        {"integrity_errors", t.integrity_errors},
        {"unexpected_errors", t.unexpected_errors},
        {"faults_injected", t.faults_injected},
        {"leaked_bytes", t.leaked_bytes},
        {"leaked_descriptors", t.leaked_descriptors},
        {"p99_us", t.worst_access_p99_us},
        {"patterns", patterns},
        {"passed", t.passed},
    };
}

}  // namespace vtpage::stress
