// vtpage-bench-page-table: what a commit and an eviction cost per page through the page table,
// beside the floor of the same work done with raw backend calls in the same run.
//
//   fresh commit      PageTable (pool miss)        floor: create + map + set access per batch
//   recycled commit   PageTable (evicts LRU, reuses its page)
//                                                  floor: unmap batch + map + set access
//   commit from pool  PageTable (idle pool pages)  floor: map + set access per batch
//   eviction          PageTable::evict             floor: unmap per batch
#include <CLI/CLI.hpp>

#include <numeric>
#include <thread>

#include "support/bench_options.hpp"
#include "support/page_range.hpp"
#include "support/report_table.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/core/page_table.hpp"

namespace {

using namespace vtpage;
using bench::fixed;
using bench::page_range;

constexpr const char* program = "vtpage-bench-page-table";

struct Options : bench::BenchOptions {
    std::size_t pages = 1024;
    std::size_t batch = 256;
    int repeats = 5;
    int threads = 4;
};

struct Costs {
    double fresh = 0, recycled = 0, from_pool = 0, evict = 0;  // microseconds per page
    double windowed = 0;  // recycled commit in a table that reaches pages through windows
    double parallel = 0;  // recycled commit from several threads at once (wall time per page)
    PageTableStatistics statistics;  // of the table run
};

// Raw backend calls, batch by batch, the way the page table issues them.
Costs measure_floor(Backend& backend, const Options& options) {
    const std::size_t page = backend.granularity().minimum;
    const std::size_t n = options.pages, batch = options.batch;
    const DeviceAddress a = backend.reserve(n * page);
    const DeviceAddress b = backend.reserve(n * page);
    std::vector<PhysicalHandle> handles(n);
    Costs costs;

    bench::Stopwatch fresh;
    for (std::size_t first = 0; first < n; first += batch) {
        const std::size_t count = std::min(batch, n - first);
        for (std::size_t i = first; i < first + count; ++i) {
            handles[i] = backend.create(page);
            backend.map(a + i * page, page, handles[i]);
        }
        backend.set_access(a + first * page, count * page, Access::read_write);
    }
    costs.fresh = fresh.seconds() * 1e6 / double(n);

    bench::Stopwatch recycled;
    for (std::size_t first = 0; first < n; first += batch) {
        const std::size_t count = std::min(batch, n - first);
        backend.unmap(a + first * page, count * page);
        for (std::size_t i = first; i < first + count; ++i)
            backend.map(b + i * page, page, handles[i]);
        backend.set_access(b + first * page, count * page, Access::read_write);
    }
    costs.recycled = recycled.seconds() * 1e6 / double(n);

    bench::Stopwatch evict;
    for (std::size_t first = 0; first < n; first += batch) {
        backend.unmap(b + first * page, std::min(batch, n - first) * page);
    }
    costs.evict = evict.seconds() * 1e6 / double(n);

    bench::Stopwatch from_pool;
    for (std::size_t first = 0; first < n; first += batch) {
        const std::size_t count = std::min(batch, n - first);
        for (std::size_t i = first; i < first + count; ++i)
            backend.map(a + i * page, page, handles[i]);
        backend.set_access(a + first * page, count * page, Access::read_write);
    }
    costs.from_pool = from_pool.seconds() * 1e6 / double(n);

    backend.unmap(a, n * page);
    for (auto handle : handles) backend.release(handle);
    backend.free_reservation(a, n * page);
    backend.free_reservation(b, n * page);
    return costs;
}

// Runs body(thread) on options.threads threads and returns the wall time in seconds.
template <typename Body>
double run_threads(int threads, Body body) {
    std::vector<std::thread> workers;
    bench::Stopwatch wall;
    for (int t = 0; t < threads; ++t) workers.emplace_back(body, t);
    for (auto& worker : workers) worker.join();
    return wall.seconds();
}

// The recycle floor from several threads: each moves its share of the pages from one range to
// another (unmap batch, map, set access), all at once. Shows whether the driver's VMM calls
// run in parallel.
double measure_parallel_floor(Backend& backend, const Options& options) {
    const std::size_t page = backend.granularity().minimum;
    const std::size_t n = options.pages, batch = options.batch;
    const std::size_t threads = std::size_t(options.threads);
    const DeviceAddress a = backend.reserve(n * page);
    const DeviceAddress b = backend.reserve(n * page);
    std::vector<PhysicalHandle> handles(n);
    for (std::size_t i = 0; i < n; ++i) {
        handles[i] = backend.create(page);
        backend.map(a + i * page, page, handles[i]);
    }
    backend.set_access(a, n * page, Access::read_write);
    const std::size_t share = n / threads;
    const double seconds = run_threads(options.threads, [&](int t) {
        const std::size_t begin = std::size_t(t) * share;
        for (std::size_t first = begin; first < begin + share; first += batch) {
            const std::size_t count = std::min(batch, begin + share - first);
            backend.unmap(a + first * page, count * page);
            for (std::size_t i = first; i < first + count; ++i) {
                backend.map(b + i * page, page, handles[i]);
            }
            backend.set_access(b + first * page, count * page, Access::read_write);
        }
    });
    for (std::size_t i = 0; i < n; ++i) {
        backend.unmap((i < share * threads ? b : a) + i * page, page);
        backend.release(handles[i]);
    }
    backend.free_reservation(a, n * page);
    backend.free_reservation(b, n * page);
    return seconds * 1e6 / double(share * threads);
}

// A table over 4x the measured pages, with a budget of the measured pages.
PageTableSettings table_settings(Backend& backend, const Options& options) {
    PageTableSettings settings;
    settings.region_size = 4 * options.pages * backend.granularity().minimum;
    settings.budget_bytes = options.pages * backend.granularity().minimum;
    return settings;
}

// Requests pages [begin, begin + options.pages) and commits them, batch by batch.
void commit_queued_range(PageTable& table, const Options& options, PageIndex begin) {
    for (std::size_t first = 0; first < options.pages; first += options.batch) {
        const auto pages =
            page_range(begin + first, std::min(options.batch, options.pages - first));
        table.request(pages);
        table.commit_queued(pages.size());
    }
}

// Recycled commits through one page table from several threads: each commits its own pages,
// evicting the oldest resident ones. Backend calls run outside the table's lock.
double measure_parallel_table(Backend& backend, const Options& options) {
    const std::size_t n = options.pages, batch = options.batch;
    const std::size_t threads = std::size_t(options.threads);
    PageTable table(backend, table_settings(backend, options));
    for (std::size_t first = 0; first < n; first += batch) {
        table.commit(page_range(first, std::min(batch, n - first)));
    }
    const std::size_t share = n / threads;
    const double seconds = run_threads(options.threads, [&](int t) {
        const PageIndex begin = n + std::size_t(t) * share;
        for (std::size_t first = 0; first < share; first += batch) {
            table.commit(page_range(begin + first, std::min(batch, share - first)));
        }
    });
    table.check_invariants();
    return seconds * 1e6 / double(share * threads);
}

// The same work through the page table: request a batch, commit_queued it.
Costs measure_table(Backend& backend, const Options& options) {
    const std::size_t n = options.pages, batch = options.batch;
    PageTable table(backend, table_settings(backend, options));
    Costs costs;
    bench::Stopwatch fresh;
    commit_queued_range(table, options, 0);  // every page is a pool miss
    costs.fresh = fresh.seconds() * 1e6 / double(n);

    bench::Stopwatch recycled;
    // The budget is full: each batch evicts the oldest pages and reuses them.
    commit_queued_range(table, options, n);
    costs.recycled = recycled.seconds() * 1e6 / double(n);

    bench::Stopwatch evict;
    for (std::size_t first = 0; first < n; first += batch) {
        table.evict(page_range(n + first, std::min(batch, n - first)));
    }
    costs.evict = evict.seconds() * 1e6 / double(n);

    bench::Stopwatch from_pool;
    commit_queued_range(table, options, 2 * n);  // the evicted pages wait idle in the pool
    costs.from_pool = from_pool.seconds() * 1e6 / double(n);
    table.check_invariants();
    costs.statistics = table.statistics();
    return costs;
}

// A recycled commit in a table that does not map into its region: the pages are reached through
// windows mapped once per physical page, so recycling makes no VMM call.
double measure_windowed_recycle(Backend& backend, const Options& options) {
    PageTableSettings settings = table_settings(backend, options);
    settings.map_into_region = false;
    settings.pool.map_windows = true;
    settings.pool.window_pages = options.pages;
    PageTable table(backend, settings);
    commit_queued_range(table, options, 0);
    bench::Stopwatch recycled;
    commit_queued_range(table, options, options.pages);
    return recycled.seconds() * 1e6 / double(options.pages);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "vtpage page table benchmark: per-page cost of commits and evictions beside "
        "the raw backend calls",
        program};
    Options options;
    bench::add_bench_options(app, options);
    app.add_option("--pages", options.pages, "Pages per measurement")
        ->check(app::count_in(1, 1 << 20));
    app.add_option("--batch", options.batch, "Pages per commit batch")
        ->check(app::count_in(1, 1 << 16));
    app.add_option("--repeats", options.repeats, "Repeats (the median is reported)")
        ->check(app::count_in(1, 1000));
    app.add_option("--threads", options.threads, "Threads for the parallel rows")
        ->check(app::count_in(1, 64));
    if (auto status = app::parse_command_line(app, argc, argv)) return *status;
    if (options.quick) {
        options.pages = 64;
        options.batch = 16;
        options.repeats = 1;
    }

    try {
        auto backend = bench::make_bench_backend(options.backend);
        const auto& caps = backend->capabilities();
        std::printf(
            "page table benchmark on %s (%s): %zu pages of %zu KiB, batches of %zu, "
            "median of %d\n",
            caps.backend.c_str(), caps.device_name.c_str(), options.pages,
            backend->granularity().minimum / 1024, options.batch, options.repeats);
        std::vector<Costs> floors, tables;
        bench::run_repeats(options.repeats, [&](int) {
            // Alternate so that drift in the machine touches both sides alike.
            floors.push_back(measure_floor(*backend, options));
            floors.back().parallel = measure_parallel_floor(*backend, options);
            tables.push_back(measure_table(*backend, options));
            tables.back().windowed = measure_windowed_recycle(*backend, options);
            tables.back().parallel = measure_parallel_table(*backend, options);
        });
        bench::ReportTable table("Per-page cost on " + caps.backend + " (" + caps.device_name + ")",
                                 {"operation", "vtpage us/page", "floor us/page", "ratio",
                                  "vtpage pages/s", "floor (raw backend calls)", "goal"});
        nlohmann::json rows = nlohmann::json::array();
        auto row = [&](const char* name, double Costs::*field, const char* floor_name,
                       const char* goal) {
            const double ours = bench::median_of(tables, field);
            const double floor = bench::median_of(floors, field);
            table.add_row({name, fixed(ours, 2), fixed(floor, 2), fixed(ours / floor, 2) + "x",
                           fixed(1e6 / ours, 0), floor_name, goal});
            rows.push_back({{"operation", name},
                            {"vtpage_us_per_page", ours},
                            {"floor_us_per_page", floor},
                            {"ratio", ours / floor},
                            {"pages_per_second", 1e6 / ours}});
        };
        row("fresh commit", &Costs::fresh, "create + map + set access per batch", "<= 1.3x");
        row("recycled commit", &Costs::recycled, "unmap + map + set access per batch",
            "<= 1.3x, >= 30000/s");
        const std::string parallel_name =
            "recycled commit, " + std::to_string(options.threads) + " threads";
        const std::string parallel_floor =
            "unmap + map + set access, " + std::to_string(options.threads) + " threads";
        row(parallel_name.c_str(), &Costs::parallel, parallel_floor.c_str(), "<= 1.3x, >= 30000/s");
        row("commit from idle pool", &Costs::from_pool, "map + set access per batch", "");
        row("eviction", &Costs::evict, "unmap per batch", "");
        {
            // No floor of backend calls: this path makes none.
            const double ours = bench::median_of(tables, &Costs::windowed);
            const double remap_floor = bench::median_of(floors, &Costs::recycled);
            table.add_row({"recycled commit, windows", fixed(ours, 2), fixed(remap_floor, 2),
                           fixed(ours / remap_floor, 3) + "x", fixed(1e6 / ours, 0),
                           "(none made; floor column: the remap floor)", ">= 30000/s"});
            rows.push_back({{"operation", "recycled commit, windows"},
                            {"vtpage_us_per_page", ours},
                            {"floor_us_per_page", remap_floor},
                            {"ratio", ours / remap_floor},
                            {"pages_per_second", 1e6 / ours}});
        }
        table.print();

        // Where the time goes: the backend calls the page table made in the last repeat.
        const PageTableStatistics& stats = tables.back().statistics;
        bench::ReportTable calls("Backend calls made by the page table (last repeat, per call)",
                                 {"call", "count", "p50 us", "p99 us", "mean us"});
        auto call_row = [&](const char* name, std::uint64_t count, const LatencySummary& l) {
            calls.add_row({name, std::to_string(count), fixed(l.p50_us, 2), fixed(l.p99_us, 2),
                           fixed(l.mean_us, 2)});
        };
        call_row("create (pool miss)", stats.pool.creates, stats.pool.create_latency);
        call_row("map (one page)", stats.region.maps, stats.region.map_latency);
        call_row("set access (one run)", stats.region.set_access_calls,
                 stats.region.set_access_latency);
        call_row("unmap (one run)", stats.region.unmaps, stats.region.unmap_latency);
        call_row("release (trim)", stats.pool.releases, stats.pool.release_latency);
        calls.print();
        if (!bench::write_json_file(options.json, {{"backend", caps.backend},
                                                   {"device", caps.device_name},
                                                   {"pages", options.pages},
                                                   {"batch", options.batch},
                                                   {"repeats", options.repeats},
                                                   {"rows", rows}})) {
            return app::exit_failure;
        }
    } catch (const Error& error) {
        return app::report(program, app::exit_failure, error.what());
    }
    return app::exit_success;
}
