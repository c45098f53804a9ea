#include "stress_run.hpp"

#include <algorithm>
#include <thread>

#include "page_exporter.hpp"
#include "residency_auditor.hpp"
#include "run_monitor.hpp"
#include "stamp_book.hpp"
#include "stress_worker.hpp"
#include "vtpage/backend/fault_injecting_backend.hpp"

namespace vtpage::stress {

namespace {

// Backend and table messages: errors go to stderr (they are also what the checks will find);
// warnings are expected under injected faults and only counted.
Log run_log() {
    return Log([](LogLevel level, std::string_view message) {
        if (level == LogLevel::error) {
            std::fprintf(stderr, "vtpage-stress: %.*s\n", int(message.size()), message.data());
        }
    });
}

}  // namespace

StressRun::StressRun(Backend& backend, const StressOptions& options,
                     std::vector<std::unique_ptr<PageVerifier>>& verifiers)
    : backend_(backend), options_(options), verifiers_(verifiers) {}

void StressRun::warm_up(const PageTableSettings& run_settings) {
    PageTableSettings settings;
    settings.region_size = run_settings.region_size;
    settings.budget_bytes = run_settings.budget_bytes;
    settings.pool.release_threshold = run_settings.pool.release_threshold;
    settings.log = run_settings.log;
    settings.pool.log = run_settings.log;
    PageTable table(backend_, settings);
    const std::uint64_t pages = 2 * table.budget_pages();
    const std::uint64_t step = std::max<std::uint64_t>(1, table.page_count() / pages);
    for (std::uint64_t first = 0; first < pages; first += options_.batch) {
        std::vector<PageIndex> batch;
        for (std::uint64_t i = first; i < std::min(pages, first + options_.batch); ++i) {
            batch.push_back(std::min(i * step, table.page_count() - 1));
        }
        const auto mappings = table.commit(batch, /*pin=*/true);
        std::vector<StampJob> jobs;
        jobs.reserve(mappings.size());
        for (const PageMapping& m : mappings) {
            jobs.push_back({table.data_address(m.page), m.page, m.generation, 1, 0});
        }
        StampMismatch unused{};
        verifiers_.front()->run(jobs.data(), jobs.size(), unused);
        table.unpin(batch);
    }
    table.shutdown();
}

PatternResult StressRun::run(PatternKind kind, const std::string& label) {
    PatternResult result;
    result.kind = kind;
    RunStats stats;
    StampBook book;
    const bool faults = !options_.inject_faults.empty();
    const std::size_t page_size = backend_.granularity().minimum;
    const std::uint64_t pattern_seed = options_.seed * 1000003 + static_cast<std::uint64_t>(kind);

    FaultInjectingBackend faulty(backend_, pattern_seed);
    ResidencyAuditor auditor(stats);
    PageExporter exporter(faulty, stats);
    const bool export_pages = options_.export_pages.value_or(backend_.capabilities().fd_handles);

    PageTableSettings settings;
    settings.region_size = options_.va_gib << 30;
    settings.budget_bytes = options_.budget_mib << 20;
    const std::size_t budget_pages = settings.budget_bytes / page_size;
    settings.pool.release_threshold = options_.release_threshold_mib
                                          ? *options_.release_threshold_mib << 20
                                          : (budget_pages + (budget_pages + 3) / 4) * page_size;
    settings.log = run_log();
    settings.pool.log = settings.log;
    auditor.attach(settings);
    if (export_pages) exporter.attach(settings.pool);

    if (!warm_) {
        warm_up(settings);
        warm_ = true;
    }
    // The baseline: everything the process, the backend and the device hold before the table.
    LeakCheckSettings leak_settings;
    leak_settings.device_memory_tolerance = options_.device_memory_tolerance_mib << 20;
    LeakCheck leaks(backend_, leak_settings);
    const LiveResources baseline = backend_.live_resources();
    {
        PageTable table(faulty, settings);
        leaks.watch(table.region().base(), table.region().size());
        // Armed once the table is made, disarmed before it is torn down: the run is about
        // what happens in between.
        if (faults) faulty.add_rules(parse_fault_rules(options_.inject_faults));

        const PatternSpace space{table.page_count(), budget_pages, options_.zipf_skew};
        auto cursor = std::make_shared<std::atomic<std::uint64_t>>(0);
        OpQuota quota(options_.ops, options_.seconds);
        app::ProgressBar progress({.label = label, .enabled = options_.progress});
        {
            RunMonitor monitor(table, stats, quota, progress,
                               {options_.check_ms, options_.frame_ms, 2});
            std::vector<std::thread> threads;
            for (int t = 0; t < options_.threads; ++t) {
                WorkerSetup setup;
                setup.table = &table;
                setup.verifier = verifiers_[static_cast<std::size_t>(t)].get();
                setup.book = &book;
                setup.stats = &stats;
                setup.quota = &quota;
                setup.pattern = make_pattern(kind, space, cursor);
                setup.seed = pattern_seed * 7919 + static_cast<std::uint64_t>(t);
                setup.batch = options_.batch;
                setup.faults_injected = faults;
                setup.corrupt_every = t == 0 ? options_.corrupt_every : 0;
                threads.emplace_back(
                    [worker = StressWorker(std::move(setup))]() mutable { worker.run(); });
            }
            for (auto& thread : threads) thread.join();
            result.seconds = quota.elapsed_seconds();
            monitor.stop();
        }
        result.faults_injected = faulty.injected_total();
        faulty.clear_rules();
        table.complete_frame(table.current_frame());

        // Every page still resident: the table agrees with the callbacks, and its stamps hold.
        auditor.check_against(table);
        const std::vector<PageMapping> resident = auditor.resident();
        for (std::size_t first = 0; first < resident.size(); first += options_.batch) {
            const std::size_t count = std::min(options_.batch, resident.size() - first);
            std::vector<PageIndex> pages;
            for (std::size_t i = 0; i < count; ++i) pages.push_back(resident[first + i].page);
            try {
                table.pin(pages);
                StressWorker::verify_pinned(table, *verifiers_.front(), book, stats,
                                            std::span(resident).subspan(first, count),
                                            /*stamp_fresh_pages=*/false);
                table.unpin(pages);
                result.swept_pages += count;
            } catch (const Error& error) {
                stats.unexpected_error(std::string("final sweep: ") + error.what());
            }
        }
        try {
            table.check_invariants(baseline);
            ++stats.invariant_checks;
        } catch (const Error& error) {
            stats.integrity_error(error.what());
        }
        result.table = table.statistics();
        // Pages being evicted hold memory until they reach the pool: at no moment may the
        // memory in use exceed the budget.
        if (result.table.pool.used_bytes_high > budget_pages * page_size) {
            stats.integrity_error(detail::concat("the pool's pages in use peaked at ",
                                                 result.table.pool.used_bytes_high / page_size,
                                                 ", over the budget of ", budget_pages));
        }
        try {
            table.shutdown();
            table.check_invariants(baseline);
        } catch (const Error& error) {
            stats.unexpected_error(std::string("teardown: ") + error.what());
        }
        progress.finish(detail::concat(stats.ops.load(), " ops in ",
                                       int(result.seconds * 10) / 10.0, " s, ",
                                       stats.integrity_errors.load(), " integrity errors"));
    }
    result.open_exports_after_teardown = exporter.open_descriptors();
    result.exports = exporter.exports();
    result.leaks = leaks.check();

    result.ops = stats.ops;
    result.accessed = stats.accessed;
    result.verified = stats.verified;
    result.stamped = stats.stamped;
    result.prefetched = stats.prefetched;
    result.evicted = stats.evicted;
    result.integrity_errors = stats.integrity_errors;
    result.unexpected_errors = stats.unexpected_errors;
    result.invariant_checks = stats.invariant_checks;
    result.refused_busy = stats.refusals(Refusal::busy);
    result.refused_budget = stats.refusals(Refusal::budget);
    result.refused_not_resident = stats.refusals(Refusal::not_resident);
    result.refused_injected = stats.refusals(Refusal::injected_fault);
    for (std::size_t k = 0; k < all_op_kinds.size(); ++k) {
        result.latency[k] = stats.latency(all_op_kinds[k]).summary();
    }
    result.problems = stats.problems();
    if (!result.leak_free()) {
        result.problems.push_back("leak: " + result.leaks.describe() +
                                  (result.open_exports_after_teardown
                                       ? detail::concat("; ", result.open_exports_after_teardown,
                                                        " exported descriptors still open")
                                       : std::string()));
    }
    return result;
}

}  // namespace vtpage::stress
