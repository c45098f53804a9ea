#include "stress_options.hpp"

#include "vtpage/app/command_line.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/backend/fault_injecting_backend.hpp"

namespace vtpage::stress {

namespace {

// "uniform,zipf" or "all" into kinds; empty on a bad name.
std::vector<PatternKind> parse_patterns(const std::string& text, std::string& bad) {
    if (text == "all") return all_patterns();
    std::vector<PatternKind> kinds;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        const std::string name =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        PatternKind kind;
        if (!pattern_from_string(name, kind)) {
            bad = name;
            return {};
        }
        kinds.push_back(kind);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return kinds;
}

}  // namespace

ParsedOptions parse_options(int argc, char** argv) {
    StressOptions o;
    CLI::App app{
        "vtpage-stress: threads commit, pin, stamp, verify, evict and release the pages of a "
        "huge region under a tight budget, in hostile access patterns, optionally with "
        "injected backend faults; every page's stamps are checked at every access, and "
        "nothing may leak. Exit status: 0 when clean, 1 on integrity errors, unexpected "
        "errors or leaks, 2 on bad flags.",
        "vtpage-stress"};
    std::string patterns = "all";
    bool export_pages = true;
    bool no_progress = false;
    std::size_t release_threshold_mib = 0;
    app::add_backend_option(app, o.backend)->capture_default_str();
    app.add_option("--va-gib", o.va_gib, "Size of the virtual region, in GiB")
        ->check(app::count_in(1, std::uint64_t{64} * 1024))
        ->capture_default_str();
    app.add_option("--budget-mib", o.budget_mib, "The page table's budget, in MiB")
        ->check(app::count_in(2, std::uint64_t(1) << 24))
        ->capture_default_str();
    app.add_option("--pattern", patterns,
                   "Access pattern: uniform, zipf, scan, thrash, bursty, a comma-separated "
                   "list of them, or all (each in turn)")
        ->capture_default_str();
    app.add_option("--zipf-skew", o.zipf_skew, "Skew of the zipf pattern (P(rank k) ~ 1/k^skew)")
        ->check(app::number_in(0.01, 10.0))
        ->capture_default_str();
    app.add_option("--threads", o.threads, "Worker threads")
        ->check(app::count_in(1, 256))
        ->capture_default_str();
    auto* seconds = app.add_option("--seconds", o.seconds,
                                   "Run each pattern this long (default 10 when --ops is not "
                                   "given; with --ops, whichever comes first; 0 with --ops: "
                                   "no time limit)")
                        ->check(app::number_in(0.0, 86400.0));
    app.add_option("--ops", o.ops, "Run each pattern for this many page operations")
        ->check(app::count_in(1, std::uint64_t(1) << 50));
    app.add_option("--seed", o.seed, "Seed of the patterns and of the fault injection")
        ->check(app::any_count<std::uint64_t>())
        ->capture_default_str();
    app.add_option("--inject-faults", o.inject_faults,
                   "Backend faults to inject, e.g. "
                   "create:out_of_memory%0.01,map%0.01,set_access%0.01,export%0.05 "
                   "(operation[:error](@N|%P), see docs/stress.md)");
    app.add_option("--json", o.json, "Write the results as JSON to this file")
        ->check(app::writable_file());
    app.add_option("--batch", o.batch, "Pages per operation")
        ->check(app::count_in(1, 256))
        ->capture_default_str();
    app.add_option("--stamp-stride", o.stamp_stride,
                   "Bytes between the stamps in a page (a multiple of 32 that divides the "
                   "page size)")
        ->check(app::count_in(32, std::uint64_t(1) << 30))
        ->capture_default_str();
    auto* export_flag = app.add_flag(
        "--export,!--no-export", export_pages,
        "Export every physical page as an fd when the pool creates it and keep it open while "
        "the page lives, as interop does (default: when the backend can)");
    app.add_option("--frame-ms", o.frame_ms,
                   "Begin a frame this often and complete the one two frames back, fencing "
                   "pages in use from eviction (0: no frames)")
        ->check(app::number_in(0.0, 10000.0))
        ->capture_default_str();
    app.add_option("--check-ms", o.check_ms,
                   "Check the table's invariants this often while running (0: only at the end)")
        ->check(app::number_in(0.0, 100000.0))
        ->capture_default_str();
    auto* threshold = app.add_option("--release-threshold-mib", release_threshold_mib,
                                     "The pool's release threshold (default: budget + 25%)")
                          ->check(app::count_in(0, std::uint64_t(1) << 24));
    app.add_flag("--no-progress", no_progress, "No progress bar on stderr");
    app.add_option("--device-memory-tolerance-mib", o.device_memory_tolerance_mib,
                   "Leak check on a GPU: free memory may end this much below the baseline "
                   "(for tools such as compute-sanitizer that take device memory as they go)")
        ->check(app::count_in(0, std::uint64_t(1) << 24))
        ->capture_default_str();
    // Self-test of the checks: spoil a stamp every N accesses of the first thread; the run
    // must then fail with integrity errors.
    app.add_option("--corrupt-every", o.corrupt_every)
        ->check(app::any_count<std::uint64_t>())
        ->group("");

    ParsedOptions parsed;
    const auto status = app::parse_command_line(app, argc, argv, [&] {
        // --seconds 0 means "no time limit": without --ops that would be a run without end.
        if (seconds->count() > 0 && o.seconds == 0 && o.ops == 0) {
            throw CLI::ValidationError("--seconds",
                                       "0 (no time limit) needs --ops: the run would not end");
        }
        std::string bad;
        o.patterns = parse_patterns(patterns, bad);
        if (o.patterns.empty()) {
            throw CLI::ValidationError(
                "--pattern",
                "unknown pattern '" + bad + "' (uniform, zipf, scan, thrash, bursty, all)");
        }
        if (!o.inject_faults.empty()) {
            try {
                parse_fault_rules(o.inject_faults);
            } catch (const Error& error) {
                throw CLI::ValidationError("--inject-faults", error.what());
            }
        }
    });
    if (status) {
        parsed.exit_code = *status;
        return parsed;
    }
    if (seconds->count() == 0 && o.ops == 0) o.seconds = 10;
    if (export_flag->count() > 0) o.export_pages = export_pages;
    if (threshold->count() > 0) o.release_threshold_mib = release_threshold_mib;
    o.progress = !no_progress;
    parsed.options = o;
    return parsed;
}

}  // namespace vtpage::stress
