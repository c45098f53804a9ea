// vtpage-bench-viewer: the viewer's benchmark flight (a fast low flight that streams new pages
// every frame, demos/viewer/camera_path.cpp) timed frame by frame, beside the floor measured in
// the same run: the flight's first pose, settled with every page it needs resident, held for as
// many frames with streaming paused (feedback still read back and processed, nothing requested),
// i.e. rendering and feedback alone. (Flying on with streaming paused is no floor: samples whose
// pages are missing walk up the mip chain, which costs the GPU more than streaming them.) The
// ratio says what streaming costs the frame time. Beside the frame times, what a user sees:
// the share of pixels at the level they wanted and the levels missing (frame_stats.hpp), and a
// third flight, the cuts path over the same frames, with the time to full detail after each cut.
// The viewer itself (--camera-path benchmark --headless) is the full measurement with
// screenshot and stats; this adds the floor.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "camera_path.hpp"
#include "frame_stats.hpp"
#include "headless_loop.hpp"
#include "streaming_session.hpp"
#include "support/bench_options.hpp"
#include "support/report_table.hpp"
#include "viewer_run.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/streaming/layout/tile_format.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::viewer;
using bench::fixed;

struct Flight {
    std::string name;
    Percentiles frame_ms, gpu_ms, textured_pass_ms;
    QualityFigures quality;
    FullDetailFigures full_detail;
    std::uint64_t frames = 0;
    std::uint64_t pages_streamed = 0;  // during the flight
    std::size_t resident_pages = 0;    // at the end
    double seconds = 0;
    double pages_per_second = 0;
    std::uint64_t validation_messages = 0;
    ResidencyTotals residency;  // how much of what is resident the view sampled
};

enum class FlightKind { floor, benchmark, cuts };

Flight fly(ViewerOptions options, FlightKind kind, const Log& log) {
    StreamingSession session(session_settings(options, log));
    const bool streaming = kind != FlightKind::floor;
    CameraPath path = *find_camera_path(kind == FlightKind::cuts ? "cuts" : "benchmark");
    // The cuts path: one pass over the flight's frames, every hold the same number of frames.
    if (kind == FlightKind::cuts) options.time_step_ms = path.seconds * 1000.0 / options.frames;
    if (!streaming) {
        // The first pose, held: every page it needs is resident, none is streamed.
        path.seconds = 0;
        path.holds_end = true;
        SessionFrame first;
        first.view_projection = Camera{path.at(0, session.plane_extent())}.view_projection(
            double(options.width) / options.height);
        session.settle(first, std::chrono::seconds(60));
        session.pause_requests(true);
    }
    const std::uint64_t before = session.counters().streamer.pages_filled;
    FrameStats stats(options.warmup_frames);
    Flight flight;
    const char* names[] = {"first pose held, resident (floor)", "streaming",
                           "cuts: 4 places held in turn, streaming"};
    flight.name = names[int(kind)];
    flight.seconds = fly_path(session, path, options.frames, options, stats, nullptr);
    for (const CompletedSummary& done : session.finish()) stats.record_completed(done);
    const SessionCounters counters = session.counters();
    flight.frames = stats.frames();
    flight.frame_ms = stats.frame_ms();
    flight.gpu_ms = stats.gpu_ms();
    flight.textured_pass_ms = stats.textured_pass_ms();
    flight.quality = stats.quality();
    flight.full_detail = full_detail_figures(stats.closed_cuts());
    flight.pages_streamed = counters.streamer.pages_filled - before;
    flight.resident_pages = counters.streamer.table.resident_pages;
    flight.pages_per_second = double(flight.pages_streamed) / flight.seconds;
    flight.validation_messages = counters.validation.warnings + counters.validation.errors;
    flight.residency = counters.residency;
    return flight;
}

std::string percent(double share) { return fixed(share * 100.0, 1) + " %"; }

std::string quality_cell(const QualityFigures& q) {
    return q.frames ? percent(q.share_p50) + " / " + percent(q.share_min) : "not measured";
}

// Reached cuts' frames; how many of the cuts reached full detail, and why the others did not.
std::string full_detail_cell(const FullDetailFigures& f) {
    if (f.cuts == 0) return "no cuts";
    std::string cell = std::to_string(f.reached) + " of " + std::to_string(f.cuts) + " reached";
    if (f.reached)
        cell = fixed(f.frames.p50, 0) + " / " + fixed(f.frames.max, 0) + " (" + cell + ")";
    if (f.over_budget) cell += ", " + std::to_string(f.over_budget) + " over budget";
    return cell;
}

// The mean share of tiles the view sampled of those resident and of those in the pages it
// samples, and the MiB that residency by tile would have needed beside the pages in use.
std::string residency_cell(const ResidencyTotals& r) {
    if (r.samples == 0) return "not measured";
    const auto mib = [](double bytes) { return fixed(bytes / double(1 << 20), 0); };
    return percent(r.mean_share()) + " / " + percent(r.mean_in_use_share()) + " (" +
           mib(r.mean_tile_granular_bytes()) + " of " + mib(r.mean_in_use_bytes()) + ")";
}

nlohmann::json flight_json(const Flight& f) {
    return {{"flight", f.name},
            {"frames", f.frames},
            {"frame_ms_p50", f.frame_ms.p50},
            {"frame_ms_p99", f.frame_ms.p99},
            {"frame_ms_max", f.frame_ms.max},
            {"gpu_ms_p50", f.gpu_ms.p50},
            {"pages_streamed", f.pages_streamed},
            {"pages_streamed_per_second", f.pages_per_second},
            {"resident_tiles_sampled_mean", f.residency.mean_share()},
            {"in_use_tiles_sampled_mean", f.residency.mean_in_use_share()},
            {"in_use_mib_mean", f.residency.mean_in_use_bytes() / double(1 << 20)},
            {"tile_granular_mib_mean", f.residency.mean_tile_granular_bytes() / double(1 << 20)},
            {"resident_mib_mean", f.residency.mean_resident_bytes() / double(1 << 20)},
            {"share_at_wanted_level_p50", f.quality.share_p50},
            {"share_at_wanted_level_min", f.quality.share_min},
            {"mean_levels_missing_mean", f.quality.missing_mean},
            {"cuts", f.full_detail.cuts},
            {"cuts_reached", f.full_detail.reached},
            {"cuts_over_budget", f.full_detail.over_budget},
            {"full_detail_frames_p50", f.full_detail.frames.p50},
            {"full_detail_frames_max", f.full_detail.frames.max},
            {"full_detail_ms_p50", f.full_detail.ms.p50},
            {"full_detail_ms_max", f.full_detail.ms.max},
            {"validation_messages", f.validation_messages}};
}

// The textured pass of the held first pose in each tile format the procedural source makes,
// forward and deferred, beside forward RGBA8's in the same run: what decoding block-compressed
// tiles in the shader costs, and what sampling in a compute pass saves.
nlohmann::json compare_formats(ViewerOptions options, const Log& log) {
    bench::ReportTable table(
        "Textured pass by tile format, first pose held, every page resident",
        {"format", "texturing", "textured pass GPU ms p50", "p99", "frame GPU ms p50",
         "pages resident", "vs RGBA8 same texturing", "vs RGBA8 forward"});
    nlohmann::json rows = nlohmann::json::array();
    double rgba8_ms[2] = {0, 0};  // forward, deferred
    for (const bool deferred : {false, true}) {
        for (const vt::TileFormat format :
             {vt::TileFormat::rgba8, vt::TileFormat::bc1, vt::TileFormat::bc3}) {
            options.texture_format = format;
            options.deferred_texturing = deferred;
            const Flight held = fly(options, FlightKind::floor, log);
            const double ms = held.textured_pass_ms.p50;
            if (format == vt::TileFormat::rgba8) rgba8_ms[deferred] = ms;
            const auto ratio = [&](double base) { return base > 0 ? ms / base : 0; };
            const std::string name{vt::tile_format_name(format)};
            const char* texturing = deferred ? "deferred" : "forward";
            table.add_row({name, texturing, fixed(ms, 3), fixed(held.textured_pass_ms.p99, 3),
                           fixed(held.gpu_ms.p50, 3), std::to_string(held.resident_pages),
                           fixed(ratio(rgba8_ms[deferred]), 2) + "x",
                           fixed(ratio(rgba8_ms[0]), 2) + "x"});
            rows.push_back({{"format", name},
                            {"texturing", texturing},
                            {"textured_pass_ms_p50", ms},
                            {"textured_pass_ms_p99", held.textured_pass_ms.p99},
                            {"gpu_ms_p50", held.gpu_ms.p50},
                            {"resident_pages", held.resident_pages},
                            {"ratio_to_rgba8_same_texturing", ratio(rgba8_ms[deferred])}});
        }
    }
    table.print();
    return rows;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "vtpage viewer benchmark: frame times of the streaming flight beside the same "
        "flight with streaming paused",
        "vtpage-bench-viewer"};
    ViewerOptions options;
    options.headless = true;
    options.width = 1920;
    options.height = 1080;
    options.camera_path = "benchmark";
    options.frames = 600;
    options.progress = false;
    bench::BenchOptions common;
    bench::add_bench_options(app, common);
    app.add_option("--width", options.width)->check(app::count_in(16u, 16384u));
    app.add_option("--height", options.height)->check(app::count_in(16u, 16384u));
    app.add_option("--budget-mib", options.budget_mib)->check(app::count_in(16, 1 << 22));
    app.add_option("--frames", options.frames, "Frames per flight")
        ->check(app::count_in(20, 1000000));
    app.add_option("--texture-size-log2", options.texture_size_log2)->check(app::count_in(8u, 20u));
    app.add_flag("--validation", options.validation, "Khronos validation on (slower)");
    if (auto status = app::parse_command_line(app, argc, argv)) return *status;
    options.backend = common.backend;
    const std::string& json = common.json;
    const bool quick = common.quick;
    if (quick) {
        options.width = 256;
        options.height = 144;
        options.frames = 40;
        options.budget_mib = 64;
        options.texture_size_log2 = 14;
    }
    const Log log(stderr_log(LogLevel::warning));
    try {
        const nlohmann::json formats = compare_formats(options, log);
        const Flight floor = fly(options, FlightKind::floor, log);
        const Flight streamed = fly(options, FlightKind::benchmark, log);
        const Flight cuts = fly(options, FlightKind::cuts, log);
        bench::ReportTable table(
            "The benchmark flight, " + std::to_string(options.width) + " x " +
                std::to_string(options.height) + ", " + std::to_string(options.frames) +
                " frames, budget " + std::to_string(options.budget_mib) + " MiB",
            {"flight", "frame ms p50", "frame ms p99", "frame ms max", "GPU ms p50",
             "pages streamed/s", "at wanted level p50 / min", "levels missing mean",
             "full detail after a cut, frames p50 / max",
             "tiles sampled: of resident / of pages in use (MiB by tile of in use)", "p50 vs floor",
             "p99 vs floor"});
        nlohmann::json rows = nlohmann::json::array();
        for (const Flight* f : {&floor, &streamed, &cuts}) {
            table.add_row({f->name, fixed(f->frame_ms.p50, 2), fixed(f->frame_ms.p99, 2),
                           fixed(f->frame_ms.max, 2), fixed(f->gpu_ms.p50, 2),
                           fixed(f->pages_per_second, 0), quality_cell(f->quality),
                           fixed(f->quality.missing_mean, 3), full_detail_cell(f->full_detail),
                           residency_cell(f->residency),
                           fixed(f->frame_ms.p50 / floor.frame_ms.p50, 2) + "x",
                           fixed(f->frame_ms.p99 / floor.frame_ms.p99, 2) + "x"});
            rows.push_back(flight_json(*f));
        }
        table.print();
        std::printf(
            "streaming costs %.2fx the floor's p99 frame time while streaming %.0f "
            "pages/s\n",
            streamed.frame_ms.p99 / floor.frame_ms.p99, streamed.pages_per_second);
        const bool written = bench::write_json_file(json, {{"width", options.width},
                                                           {"height", options.height},
                                                           {"frames", options.frames},
                                                           {"budget_mib", options.budget_mib},
                                                           {"rows", rows},
                                                           {"formats", formats}});
        if (!written) return app::exit_failure;
        if (floor.validation_messages + streamed.validation_messages + cuts.validation_messages >
            0) {
            std::fprintf(stderr, "validation messages (printed above)\n");
            return 1;
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
    return 0;
}
