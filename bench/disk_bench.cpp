// vtpage-bench-disk: baked pages from disk to device memory against the machine's own limits,
// all measured in one run on one set of page archives (found in --dir, or generated there):
//
//   page-cache read     the archives' bytes read sequentially with pread, warm (cached)
//   cold read           the same past the cache: O_DIRECT, or reads after POSIX_FADV_DONTNEED
//   zstd decode         the set's stored pages decoded and verified on every core
//   host-to-device      pinned pages copied into device memory on a few CUDA streams (skipped,
//                       with the reason, without a CUDA device)
//   pipeline            FileReadQueue -> decode and verify on CPU workers into pinned staging
//                       buffers -> copies into a device arena, warm and cold
//
// Beside them, the cores each of the decode limit, the pipelines and the Streamer rows had: this
// process's, everything else's and the hypervisor's (steal), with this process's CPU time per
// page, so that a row that fell on a busy machine tells itself apart from a slower streamer.
//
// The binding limit of a mode is the lowest of its read rate (in stored pages/s), the decode
// rate and the copy rate; the goal, printed and not judged, is a pipeline at 80% of it or more.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "disk/device_copy.hpp"
#include "disk/limits.hpp"
#include "disk/page_set.hpp"
#include "disk/pipeline.hpp"
#include "disk/streamer_run.hpp"
#include "support/bench_options.hpp"
#include "support/report_table.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/cpu_usage.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::bench::disk;
using bench::fixed;

constexpr const char* program = "vtpage-bench-disk";
constexpr double gib = double(1u << 30);
constexpr double gigabyte = 1e9;
constexpr double goal_fraction = 0.8;

struct Options : bench::BenchOptions {
    std::string dir;
    double generate_gib = 0;
    std::uint64_t parts_per_page = vt::page_archive_default_parts_per_page;
    std::size_t depth = 64;
    std::size_t staging_pages = 32;
    std::size_t workers = std::max(1u, std::thread::hardware_concurrency());
    std::size_t streams = 4;
    std::size_t arena_pages = 256;
    double seconds = 2;
    std::string read_backend = "automatic";
    std::size_t page_cache_copiers = 0;
    std::string decode_priority = "low";
    std::size_t passes = 1;  // the Streamer rows stream the set this many times
    std::vector<std::size_t> reader_counts{1, 4, 8, 16};
    std::string trace;  // the Streamer's traced run writes its trace here
};

const std::map<std::string, vt::FileReadBackend> read_backends = {
    {"automatic", vt::FileReadBackend::automatic},
    {"io_uring", vt::FileReadBackend::io_uring},
    {"threads", vt::FileReadBackend::threads}};

const std::map<std::string, vt::DecodeThreadPriority> decode_priorities = {
    {"normal", vt::DecodeThreadPriority::normal},
    {"low", vt::DecodeThreadPriority::low},
    {"idle", vt::DecodeThreadPriority::idle}};

// A folder of its own under the temporary directory, removed with everything in it.
class TemporaryFolder {
public:
    TemporaryFolder() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "vtpage-bench-disk-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) {
            throw Error(Errc::io_error, "mkdtemp", pattern + ": " + std::strerror(errno));
        }
        path_ = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// The page set of the run: generated first where asked (or for --quick without --dir).
PageSet prepare_page_set(const Options& options, std::optional<TemporaryFolder>& temporary) {
    std::string folder = options.dir;
    if (folder.empty()) folder = temporary.emplace().path();
    const double generate_gib =
        options.generate_gib > 0 ? options.generate_gib : (options.dir.empty() ? 1.0 / 16 : 0);
    if (generate_gib > 0) {
        std::filesystem::create_directories(folder);
        const auto bytes = std::uint64_t(generate_gib * gib);
        check_free_space(folder, bytes, std::uint64_t(2 * gib));
        generate_page_set(folder, bytes, false, std::uint32_t(options.parts_per_page));
    }
    return open_page_set(folder);
}

// A set larger than half the memory does not stay in the page cache: its warm figures are
// partly cold.
void warn_if_uncached(const PageSet& set) {
    const double memory = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
    if (double(set.total_file_bytes()) > memory / 2) {
        std::printf(
            "note: the set (%.1f GiB) is over half the memory (%.1f GiB): warm reads may "
            "not all come from the page cache\n",
            double(set.total_file_bytes()) / gib, memory / gib);
    }
}

// A measurement's pages and the cores it had, for the table of cores; for a Streamer row, its
// CPU time by kind of thread too.
struct CoresRow {
    std::string what;
    double pages = 0;
    app::CpuUsage cpu;
    std::map<std::string, double> thread_cpu_seconds;
};

nlohmann::json cpu_json(const app::CpuUsage& cpu, double pages) {
    nlohmann::json json = {{"seconds", cpu.seconds},
                           {"process_cpu_seconds", cpu.process_seconds},
                           {"process_cores", cpu.process_cores},
                           {"cpu_ms_per_page", pages > 0 ? 1000 * cpu.process_seconds / pages : 0}};
    if (cpu.machine_known) {
        json["other_cores"] = cpu.other_cores;
        json["steal_cores"] = cpu.steal_cores;
        json["idle_cores"] = cpu.idle_cores;
    }
    return json;
}

void print_cores(const std::vector<CoresRow>& rows) {
    bench::ReportTable table(
        "Cores during each measurement, on average (a row that falls while its CPU time per page "
        "holds lost cores to other processes or to steal)",
        {"measurement", "seconds", "this process", "CPU ms per page", "others", "steal", "idle"});
    for (const CoresRow& row : rows) {
        const app::CpuUsage& cpu = row.cpu;
        auto machine = [&](double cores) { return cpu.machine_known ? fixed(cores, 1) : "-"; };
        table.add_row({row.what, fixed(cpu.seconds, 1), fixed(cpu.process_cores, 1),
                       row.pages > 0 ? fixed(1000 * cpu.process_seconds / row.pages, 2) : "-",
                       machine(cpu.other_cores), machine(cpu.steal_cores),
                       machine(cpu.idle_cores)});
    }
    table.print();
}

// The Streamer rows' CPU time per page by kind of thread: the kinds that spent the most, then
// the rest together.
void print_thread_cpu(const std::vector<CoresRow>& rows) {
    constexpr std::size_t shown = 6;
    std::map<std::string, double> totals;
    for (const CoresRow& row : rows) {
        for (const auto& [kind, seconds] : row.thread_cpu_seconds) totals[kind] += seconds;
    }
    if (totals.empty()) return;
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [kind, seconds] : totals) order.emplace_back(-seconds, kind);
    std::sort(order.begin(), order.end());
    if (order.size() > shown) order.resize(shown);
    std::vector<std::string> columns = {"Streamer row"};
    for (const auto& [minus_seconds, kind] : order) columns.push_back(kind);
    columns.push_back("the rest");
    bench::ReportTable table(
        "CPU ms per page by thread (the library's threads are named vtp-...; the process's name "
        "is the bench loop's thread)",
        columns);
    for (const CoresRow& row : rows) {
        if (row.thread_cpu_seconds.empty() || row.pages <= 0) continue;
        std::vector<std::string> cells = {row.what};
        double rest = 0;
        for (const auto& [kind, seconds] : row.thread_cpu_seconds) rest += seconds;
        for (const auto& [minus_seconds, kind] : order) {
            const auto found = row.thread_cpu_seconds.find(kind);
            const double seconds = found == row.thread_cpu_seconds.end() ? 0 : found->second;
            rest -= seconds;
            cells.push_back(fixed(1000 * seconds / row.pages, 2));
        }
        cells.push_back(fixed(1000 * std::max(0.0, rest) / row.pages, 2));
        table.add_row(cells);
    }
    table.print();
}

struct Figures {
    Rate warm_read, cold_read, decode, copy;
    ReadMode cold_mode = ReadMode::cold_dropped;
    PipelineResult warm, cold;
};

double binding_limit(const Figures& f, const Rate& read) {
    double limit = std::min(read.pages_per_s, f.decode.pages_per_s);
    if (f.copy.pages_per_s > 0) limit = std::min(limit, f.copy.pages_per_s);
    return limit;
}

Figures measure(const PageSet& set, const Options& options) {
    Figures f;
    f.cold_mode = cold_read_mode(set);
    DeviceCopySettings copy{options.backend, options.arena_pages, set.page_bytes, options.streams,
                            options.staging_pages};
    DeviceCopier copier(copy);
    PipelineSettings pipeline{options.depth,
                              options.staging_pages,
                              options.workers,
                              options.seconds,
                              read_backends.at(options.read_backend),
                              options.page_cache_copiers};
    app::ProgressBar progress({.label = "measuring"});
    progress.update(0.0 / 6, "page-cache read");
    f.warm_read = measure_read(set, ReadMode::warm, options.reader_counts, options.seconds);
    progress.update(1.0 / 6, "pipeline, warm");
    f.warm = run_pipeline(set, ReadMode::warm, copier, pipeline);
    progress.update(2.0 / 6, "zstd decode");
    f.decode = measure_decode(set, options.workers, options.seconds);
    progress.update(3.0 / 6, "host-to-device copy");
    f.copy = measure_copy(copy, options.seconds);
    progress.update(4.0 / 6, "cold read");
    f.cold_read = measure_read(set, f.cold_mode, options.reader_counts, options.seconds);
    progress.update(5.0 / 6, "pipeline, cold");
    f.cold = run_pipeline(set, f.cold_mode, copier, pipeline);
    progress.clear();
    return f;
}

std::string rate_cell(double per_s, int digits = 0) { return fixed(per_s, digits); }

void print_limits(const Figures& f, const std::string& copy_skipped, std::size_t workers) {
    bench::ReportTable table("Limits (each the best over the counts tried)",
                             {"what", "pages/s", "GB/s", "best with"});
    auto add = [&](const std::string& what, const Rate& r, const std::string& unit) {
        table.add_row({what, rate_cell(r.pages_per_s), fixed(r.bytes_per_s / gigabyte, 2),
                       std::to_string(r.threads) + " " + unit + (r.threads == 1 ? "" : "s")});
    };
    add("page-cache read, sequential pread (stored pages)", f.warm_read, "reader");
    add(std::string(to_string(f.cold_mode)) + " read (stored pages)", f.cold_read, "reader");
    add("zstd decode + verify, " + std::to_string(workers) + " threads (pages)", f.decode,
        "thread");
    if (copy_skipped.empty()) {
        add("host-to-device copy, pinned (pages)", f.copy, "stream");
    } else {
        table.add_row({"host-to-device copy", "skipped", "", copy_skipped});
    }
    table.print();
}

nlohmann::json print_pipeline(const PageSet& set, const Figures& f, bool quick) {
    bench::ReportTable table("Pipeline: FileReadQueue -> decode + verify -> device",
                             {"mode", "pages/s", "GB/s delivered", "read bytes/page",
                              "delivered bytes/page", "binding limit", "of the limit", "goal"});
    auto add = [&](const std::string& mode, const PipelineResult& r, const Rate& read) {
        const double limit = binding_limit(f, read);
        const double per_page = r.pages ? double(r.bytes_read) / double(r.pages) : 0;
        table.add_row({mode, rate_cell(r.pages_per_s()),
                       fixed(r.pages_per_s() * double(set.page_bytes) / gigabyte, 2),
                       fixed(per_page, 0), std::to_string(set.page_bytes), rate_cell(limit),
                       fixed(100 * r.pages_per_s() / limit, 0) + "%",
                       quick ? "(quick: not judged)" : ">= 80%"});
    };
    add("warm", f.warm, f.warm_read);
    add(std::string(to_string(f.cold_mode)), f.cold, f.cold_read);
    table.print();
    if (!quick) {
        for (const auto& [name, r, read] :
             {std::tuple{"warm", f.warm, f.warm_read}, std::tuple{"cold", f.cold, f.cold_read}}) {
            const double fraction = r.pages_per_s() / binding_limit(f, read);
            std::printf("goal (%s): %s (%.0f%% of the binding limit)\n", name,
                        fraction >= goal_fraction ? "met" : "NOT met", 100 * fraction);
        }
    }
    return table.to_json();
}

// The warm set through the Streamer, with its file read pipeline (--workers decode threads, and
// the streamer's own choice, governed) and without, beside the warm binding limit and the bare
// pipeline.
nlohmann::json print_streamer(const PageSet& set, const Figures& f, const Options& options,
                              std::vector<CoresRow>& cores) {
    auto backend = bench::make_bench_backend(options.backend);
    bench::ReportTable table(
        "Streamer (1 GiB budget, every page asked for in order, " +
            (options.passes > 1 ? std::to_string(options.passes) + " passes, " : "") + "warm)",
        {"file reads", "pages/s", "of the binding limit", "of the bare pipeline",
         "decode threads: active at the end / most / started", "failed pages"});
    const double limit = binding_limit(f, f.warm_read);
    nlohmann::json json = nlohmann::json::array();
    // The pipeline with --workers decode threads and with the streamer's own (0), without it,
    // and with --trace once more with a recorder installed; at --decode-priority, and the
    // streamer's own at the normal priority too where that is another.
    struct Run {
        bool pipeline = true;
        std::size_t decode_threads = 0;
        bool traced = false;
        bool normal_priority = false;
    };
    std::vector<Run> runs = {{true, options.workers}, {true, 0}};
    const vt::DecodeThreadPriority priority = decode_priorities.at(options.decode_priority);
    if (priority != vt::DecodeThreadPriority::normal) runs.push_back({true, 0, false, true});
    runs.push_back({false, 0});
    if (!options.trace.empty()) runs.push_back({true, options.workers, true});
    for (const auto& [pipeline, decode_threads, traced, normal_priority] : runs) {
        StreamerRunSettings settings;
        settings.read_pipeline = pipeline;
        settings.read_backend = read_backends.at(options.read_backend);
        settings.page_cache_copiers = options.page_cache_copiers;
        settings.decode_threads = decode_threads;
        settings.decode_priority = normal_priority ? vt::DecodeThreadPriority::normal : priority;
        settings.passes = options.passes;
        settings.seconds =
            double(options.passes) * (options.quick ? 0.5 : std::max(4.0, 2 * options.seconds));
        std::optional<TraceRecorder> recorder;
        if (traced) recorder.emplace().install();
        const StreamerRunResult r = run_streamer(set, *backend, settings);
        if (recorder) {
            recorder->uninstall();
            recorder->write_file(options.trace);
        }
        std::string mode = !pipeline            ? "off (each worker reads its batch)"
                           : decode_threads > 0 ? "read queue + " + std::to_string(decode_threads) +
                                                      " decode threads"
                                                : "read queue + automatic decode threads";
        if (normal_priority) mode += ", normal priority";
        if (traced) mode += ", traced";
        cores.push_back({"Streamer, " + mode, double(r.pages), r.cpu, r.thread_cpu_seconds});
        const std::string threads = pipeline ? std::to_string(r.active_decode_threads) + " / " +
                                                   std::to_string(r.most_active_decode_threads) +
                                                   " / " + std::to_string(r.decode_threads)
                                             : "-";
        table.add_row({mode, rate_cell(r.pages_per_s()),
                       fixed(100 * r.pages_per_s() / limit, 0) + "%",
                       fixed(100 * r.pages_per_s() / f.warm.pages_per_s(), 0) + "%", threads,
                       std::to_string(r.failed)});
        json.push_back({{"read_pipeline", pipeline},
                        {"automatic_decode_threads", pipeline && decode_threads == 0},
                        {"decode_threads", r.decode_threads},
                        {"active_decode_threads", r.active_decode_threads},
                        {"most_active_decode_threads", r.most_active_decode_threads},
                        {"traced", traced},
                        {"decode_priority", normal_priority ? "normal" : options.decode_priority},
                        {"passes", options.passes},
                        {"pages", r.pages},
                        {"seconds", r.seconds},
                        {"pages_per_s", r.pages_per_s()},
                        {"failed", r.failed},
                        {"fraction_of_limit", r.pages_per_s() / limit},
                        {"cpu", cpu_json(r.cpu, double(r.pages))},
                        {"thread_cpu_seconds", r.thread_cpu_seconds}});
    }
    table.print();
    return json;
}

nlohmann::json rate_json(const Rate& r) {
    return {
        {"pages_per_s", r.pages_per_s}, {"bytes_per_s", r.bytes_per_s}, {"best_with", r.threads}};
}

nlohmann::json pipeline_json(const PipelineResult& r, double limit) {
    return {{"pages", r.pages},
            {"cpu", cpu_json(r.cpu, double(r.pages))},
            {"bytes_read", r.bytes_read},
            {"seconds", r.seconds},
            {"pages_per_s", r.pages_per_s()},
            {"binding_limit_pages_per_s", limit},
            {"fraction_of_limit", r.pages_per_s() / limit},
            {"read_backend", r.read_backend}};
}

nlohmann::json to_json(const PageSet& set, const Figures& f, const std::string& copy_skipped) {
    nlohmann::json json;
    json["pages"] = set.pages.size();
    json["archives"] = set.archives.size();
    json["stored_bytes"] = set.stored_bytes;
    json["file_bytes"] = set.total_file_bytes();
    json["page_bytes"] = set.page_bytes;
    json["cold_read_method"] = to_string(f.cold_mode);
    json["page_cache_read"] = rate_json(f.warm_read);
    json["cold_read"] = rate_json(f.cold_read);
    json["decode"] = rate_json(f.decode);
    json["decode"]["cpu"] = cpu_json(f.decode.cpu, f.decode.pages_per_s * f.decode.cpu.seconds);
    json["host_to_device"] = rate_json(f.copy);
    json["host_to_device_skipped"] = copy_skipped;
    json["pipeline_warm"] = pipeline_json(f.warm, binding_limit(f, f.warm_read));
    json["pipeline_cold"] = pipeline_json(f.cold, binding_limit(f, f.cold_read));
    return json;
}

void add_options(CLI::App& app, Options& options) {
    bench::add_bench_options(app, options);
    app.add_option("--dir", options.dir, "The folder of page archives (written by --generate-gib)");
    app.add_option("--generate-gib", options.generate_gib,
                   "First write this many GiB of distinct pages into --dir")
        ->check(app::number_in(1.0 / 64, 1 << 20));
    app.add_option("--parts-per-page", options.parts_per_page,
                   "--generate-gib: the zstd frames each page is stored in (decoded on as many "
                   "threads at once)")
        ->check(app::count_in(1, vt::page_archive_max_parts_per_page))
        ->capture_default_str();
    app.add_option("--depth", options.depth, "Reads in flight")->check(app::count_in(1, 4096));
    app.add_option("--staging-pages", options.staging_pages, "Pinned staging buffers (pages)")
        ->check(app::count_in(1, 4096));
    app.add_option("--workers", options.workers, "Decoding threads")->check(app::count_in(1, 256));
    app.add_option("--streams", options.streams, "CUDA streams of the pipeline's copies")
        ->check(app::count_in(1, 64));
    app.add_option("--arena-pages", options.arena_pages, "Device pages the copies go to")
        ->check(app::count_in(1, 1 << 16));
    app.add_option("--seconds", options.seconds, "About how long each measurement runs")
        ->check(app::number_in(0.01, 3600));
    app.add_option("--read-backend", options.read_backend,
                   "FileReadQueue's backend: automatic, io_uring or threads")
        ->check(CLI::IsMember({"automatic", "io_uring", "threads"}))
        ->capture_default_str();
    app.add_option("--page-cache-copiers", options.page_cache_copiers,
                   "io_uring: threads that copy reads the page cache holds (0: automatic)")
        ->check(app::count_in(0, vt::FileReadQueueSettings::max_page_cache_copiers))
        ->capture_default_str();
    app.add_option("--decode-priority", options.decode_priority,
                   "The Streamer's decode threads: low (SCHED_BATCH, nice +10), idle "
                   "(SCHED_IDLE) or normal; with low or idle, the automatic row is run at the "
                   "normal priority too")
        ->check(CLI::IsMember({"normal", "low", "idle"}))
        ->capture_default_str();
    app.add_option("--passes", options.passes,
                   "The Streamer rows stream the set this many times, each pass reading every "
                   "page again (a sustained run: the set must hold more than twice the 1 GiB "
                   "budget, as --generate-gib 4 does)")
        ->check(app::count_in(1, 1000))
        ->capture_default_str();
    app.add_option("--trace", options.trace,
                   "Also stream with a trace recorder installed (a third Streamer row) and write "
                   "its Chrome/Perfetto trace here");
}

// --quick: a 64 MiB set in a temporary folder, one reader count, a quarter second a measurement.
void apply_quick(Options& options) {
    if (!options.quick) return;
    options.seconds = std::min(options.seconds, 0.25);
    options.reader_counts = {4};
    options.arena_pages = std::min<std::size_t>(options.arena_pages, 16);
    options.staging_pages = std::min<std::size_t>(options.staging_pages, 8);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "vtpage disk benchmark: baked pages from page archives on disk to device memory, beside "
        "the read, decode and copy limits measured in the same run",
        program};
    Options options;
    add_options(app, options);
    auto check = [&] {
        if (options.dir.empty() && !options.quick) {
            throw CLI::ValidationError("--dir", "is required (or --quick)");
        }
    };
    if (auto status = app::parse_command_line(app, argc, argv, check)) return *status;
    apply_quick(options);

    std::optional<TemporaryFolder> temporary;  // removed on every way out of main
    PageSet set;
    try {
        set = prepare_page_set(options, temporary);
    } catch (const Error& error) {
        const bool bad_input =
            error.code() == Errc::invalid_argument || error.code() == Errc::corrupt_data;
        return app::report(program, bad_input ? app::exit_usage : app::exit_failure, error.what());
    } catch (const std::filesystem::filesystem_error& error) {
        return app::report(program, app::exit_usage, error.what());
    }
    if (options.passes > 1 && set.pages.size() <= 2 * streamer_budget_pages) {
        return app::report(
            program, app::exit_usage,
            detail::concat("--passes ", options.passes, " needs a set of more than ",
                           2 * streamer_budget_pages, " pages (twice the budget: ",
                           "a page is read again on each pass); this one has ", set.pages.size()));
    }
    try {
        std::printf(
            "disk benchmark: %zu pages in %zu archives, %.2f GiB stored (%.2fx smaller "
            "than the pages), %zu decoding threads, reads %zu deep\n",
            set.pages.size(), set.archives.size(), double(set.stored_bytes) / gib,
            double(set.page_bytes) / set.stored_bytes_per_page(), options.workers, options.depth);
        warn_if_uncached(set);
        const Figures figures = measure(set, options);
        const DeviceCopier probe({options.backend, 1, set.page_bytes, 1, 1});
        std::printf("destination: %s; reads: %s; cold reads: %s\n\n", probe.description().c_str(),
                    figures.warm.read_backend.c_str(),
                    std::string(to_string(figures.cold_mode)).c_str());
        print_limits(figures, probe.host_reason(), options.workers);
        std::printf("\n");
        nlohmann::json json = to_json(set, figures, probe.host_reason());
        json["pipeline_table"] = print_pipeline(set, figures, options.quick);
        std::printf("\n");
        std::vector<CoresRow> cores = {
            {"zstd decode + verify (the limit)",
             figures.decode.pages_per_s * figures.decode.cpu.seconds, figures.decode.cpu},
            {"pipeline, warm", double(figures.warm.pages), figures.warm.cpu},
            {"pipeline, " + std::string(to_string(figures.cold_mode)), double(figures.cold.pages),
             figures.cold.cpu}};
        json["streamer"] = print_streamer(set, figures, options, cores);
        std::printf("\n");
        print_cores(cores);
        std::printf("\n");
        print_thread_cpu(cores);
        if (!bench::write_json_file(options.json, json)) return app::exit_failure;
        return app::exit_success;
    } catch (const Error& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}
