// vtpage-bench-share: what sharing pages with another address space adds to a commit and an
// eviction, beside the same page-table work unshared in the same run; and a stream-ordered pool
// allocation beside creating a physical page.
//
//   publish, new page     commit + publish until the consumer has mapped it (fd export+import)
//                                                  floor: the same commit, unshared
//   unpublish + evict     unpublish, the consumer unmaps and acknowledges, evict
//                                                  floor: evict, unshared
//   publish, pooled page  commit from the idle pool + publish until mapped (map update only)
//                                                  floor: the same commit, unshared
//   stream pool buffer    allocate + free 2 MiB from a warm pool
//                                                  floor: create + release a physical page
//
// The consumer runs on a thread of this process with its own SharedRegionConsumer, polling
// without pause, so the numbers are the protocol's and the driver's, not a scheduler's.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "support/bench_options.hpp"
#include "support/page_range.hpp"
#include "support/report_table.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/backend/stream_ordered_pool.hpp"
#include "vtpage/sharing/shared_region_consumer.hpp"
#include "vtpage/sharing/shared_region_producer.hpp"

namespace {

using namespace vtpage;
using bench::fixed;
using bench::page_range;

constexpr const char* program = "vtpage-bench-share";

struct Options : bench::BenchOptions {
    std::size_t pages = 512;
    std::size_t batch = 64;
    int repeats = 5;
};

struct Costs {  // microseconds per page (per buffer for the pool)
    double fresh = 0, evict = 0, pooled = 0, buffer = 0;
};

PageTableSettings table_settings(Backend& backend, const Options& options) {
    PageTableSettings settings;
    settings.region_size = 4 * options.pages * backend.granularity().minimum;
    settings.budget_bytes = options.pages * backend.granularity().minimum;
    return settings;
}

Costs measure_floor(Backend& backend, const Options& options) {
    const std::size_t n = options.pages, batch = options.batch;
    PageTable table(backend, table_settings(backend, options));
    Costs costs;
    bench::Stopwatch fresh;
    for (std::size_t first = 0; first < n; first += batch) {
        table.commit(page_range(first, std::min(batch, n - first)));
    }
    costs.fresh = fresh.seconds() * 1e6 / double(n);
    bench::Stopwatch evict;
    for (std::size_t first = 0; first < n; first += batch) {
        table.evict(page_range(first, std::min(batch, n - first)));
    }
    costs.evict = evict.seconds() * 1e6 / double(n);
    bench::Stopwatch pooled;
    for (std::size_t first = 0; first < n; first += batch) {
        table.commit(page_range(n + first, std::min(batch, n - first)));
    }
    costs.pooled = pooled.seconds() * 1e6 / double(n);

    const std::size_t page = backend.granularity().minimum;
    bench::Stopwatch buffers;
    for (std::size_t i = 0; i < n; ++i) backend.release(backend.create(page));
    costs.buffer = buffers.seconds() * 1e6 / double(n);
    return costs;
}

Costs measure_shared(Backend& backend, const Options& options) {
    const std::size_t n = options.pages, batch = options.batch;
    SharedRegionProducerSettings settings;
    settings.table = table_settings(backend, options);
    settings.log = Log(silent_log());
    SharedRegionProducer producer(backend, settings);
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(backend, std::move(theirs));
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::condition_variable mapped_more;
    std::uint64_t mapped = 0;  // pages the consumer has mapped so far
    std::thread polling([&] {
        while (!stop) {
            const auto update = consumer.poll(std::chrono::milliseconds(1));
            if (update.published.empty()) continue;
            std::lock_guard lock(mutex);
            mapped += update.published.size();
            mapped_more.notify_all();
        }
    });
    std::uint64_t published = 0;
    auto publish_range = [&](PageIndex begin) {
        for (std::size_t first = 0; first < n; first += batch) {
            auto pages = page_range(begin + first, std::min(batch, n - first));
            producer.table().commit(pages);
            producer.publish(pages);
            published += pages.size();
            std::unique_lock lock(mutex);
            mapped_more.wait(lock, [&] { return mapped >= published; });
        }
    };
    Costs costs;
    bench::Stopwatch fresh;
    publish_range(0);
    costs.fresh = fresh.seconds() * 1e6 / double(n);
    bench::Stopwatch evict;
    for (std::size_t first = 0; first < n; first += batch) {
        producer.evict(page_range(first, std::min(batch, n - first)));
    }
    costs.evict = evict.seconds() * 1e6 / double(n);
    bench::Stopwatch pooled;
    publish_range(n);
    costs.pooled = pooled.seconds() * 1e6 / double(n);
    stop = true;
    polling.join();

    StreamPoolSettings pool_settings;
    pool_settings.log = Log(silent_log());
    auto pool = make_stream_ordered_pool(backend, pool_settings);
    const std::size_t page = backend.granularity().minimum;
    pool->free(pool->allocate(page));  // warm
    pool->synchronize();
    bench::Stopwatch buffers;
    for (std::size_t i = 0; i < n; ++i) pool->free(pool->allocate(page));
    pool->synchronize();
    costs.buffer = buffers.seconds() * 1e6 / double(n);
    return costs;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "vtpage sharing benchmark: per-page cost of publishing pages to another address "
        "space, beside the same page-table work unshared",
        program};
    Options options;
    bench::add_bench_options(app, options);
    app.add_option("--pages", options.pages, "Pages per measurement")
        ->check(app::count_in(1, 1 << 16));
    app.add_option("--batch", options.batch, "Pages per commit and publish")
        ->check(app::count_in(1, 4096));
    app.add_option("--repeats", options.repeats, "Repeats (the median is reported)")
        ->check(app::count_in(1, 1000));
    if (auto status = app::parse_command_line(app, argc, argv)) return *status;
    if (options.quick) {
        options.pages = 32;
        options.batch = 8;
        options.repeats = 1;
    }
    try {
        auto backend = bench::make_bench_backend(options.backend);
        const auto& caps = backend->capabilities();
        std::printf(
            "sharing benchmark on %s (%s): %zu pages of %zu KiB, batches of %zu, median "
            "of %d; the consumer is a thread with its own mappings\n",
            caps.backend.c_str(), caps.device_name.c_str(), options.pages,
            backend->granularity().minimum / 1024, options.batch, options.repeats);
        std::vector<Costs> floors, shared;
        bench::run_repeats(options.repeats, [&](int) {
            floors.push_back(measure_floor(*backend, options));
            shared.push_back(measure_shared(*backend, options));
        });
        bench::ReportTable table(
            "Per-page cost of sharing on " + caps.backend + " (" + caps.device_name + ")",
            {"operation", "shared us", "unshared us", "ratio", "floor"});
        nlohmann::json rows = nlohmann::json::array();
        auto row = [&](const char* name, double Costs::*field, const char* floor) {
            const double ours = bench::median_of(shared, field);
            const double base = bench::median_of(floors, field);
            const double ratio = ours / base;
            table.add_row({name, fixed(ours, 2), fixed(base, 2),
                           fixed(ratio, ratio < 0.1 ? 4 : 2) + "x", floor});
            rows.push_back({{"operation", name},
                            {"shared_us", ours},
                            {"unshared_us", base},
                            {"ratio", ours / base}});
        };
        row("publish, new page (fd export + import)", &Costs::fresh, "commit, new page");
        row("unpublish + acknowledge + evict", &Costs::evict, "evict");
        row("publish, pooled page (map update)", &Costs::pooled, "commit from the idle pool");
        row("stream pool: allocate + free 2 MiB", &Costs::buffer,
            "create + release a physical page");
        table.print();
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
