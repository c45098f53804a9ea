#include "headless_loop.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "camera_path.hpp"
#include "frame_stats.hpp"
#include "hud.hpp"
#include "pressure_process.hpp"
#include "streaming_session.hpp"
#include "viewer_run.hpp"

namespace vtpage::viewer {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

void print_progress(std::uint64_t frame, std::uint64_t frames, const FrameStats& stats,
                    const SessionCounters& counters, std::size_t budget_pages) {
    const Rates rates = stats.rates();
    std::string over_budget;
    if (counters.budget.newest.over_budget()) {
        over_budget = "  over budget by " +
                      std::to_string(counters.budget.newest.over_budget_pages) + " pages";
    }
    // Pages read from files: how many decode threads take them, of those started.
    std::string decode;
    if (const auto& reads = counters.streamer.file_reads; reads.loaded + reads.failed > 0) {
        decode = "  decode threads " + std::to_string(reads.active_decode_threads) + "/" +
                 std::to_string(reads.decode_threads);
    }
    std::fprintf(stderr,
                 "frame %llu/%llu  %.1f fps  %.2f ms/frame  streamed %llu pages (%.0f/s)  "
                 "resident %zu/%zu  queued %zu%s%s\n",
                 static_cast<unsigned long long>(frame), static_cast<unsigned long long>(frames),
                 rates.frames, rates.frames > 0 ? 1000.0 / rates.frames : 0.0,
                 static_cast<unsigned long long>(counters.streamer.pages_filled),
                 rates.pages_streamed, counters.streamer.table.resident_pages, budget_pages,
                 counters.streamer.pending + counters.streamer.in_flight, decode.c_str(),
                 over_budget.c_str());
}

// --pressure-mib: another process takes device memory at one time into the flight and gives
// it back at another.
class PressureSchedule {
public:
    PressureSchedule(const ViewerOptions& options, const StreamingSession& session)
        : options_(options) {
        if (!options.pressure()) return;
        if (session.backend_name() != "cuda") {
            throw UsageError(
                "--pressure-mib takes device memory through CUDA: it needs the "
                "cuda backend, not " +
                session.backend_name());
        }
        tool_ = options.pressure_tool.empty() ? find_pressure_tool() : options.pressure_tool;
        if (tool_.empty()) {
            throw UsageError(
                "--pressure-mib: vtpage-gpu-pressure is not beside the viewer "
                "(give --pressure-tool)");
        }
    }
    void at(double seconds) {
        if (!options_.pressure()) return;
        if (!process_ && !started_ && seconds >= options_.pressure_at) {
            std::fprintf(stderr, "vtpage-viewer: another process takes device memory at %.2f s\n",
                         seconds);
            process_ = std::make_unique<PressureProcess>(
                PressureSettings{.tool = tool_,
                                 .mib = options_.pressure_mib,
                                 .leave_free_mib = options_.pressure_leave_free_mib,
                                 .hold_seconds = options_.pressure_for + 60.0});
            started_ = true;
        }
        if (process_ && !released_ && seconds >= options_.pressure_at + options_.pressure_for) {
            std::fprintf(stderr,
                         "vtpage-viewer: the other process gives its memory back at "
                         "%.2f s\n",
                         seconds);
            process_->release();  // no wait here: the flight goes on; the end of it waits
            released_ = true;
        }
    }

private:
    const ViewerOptions& options_;
    std::string tool_;
    std::unique_ptr<PressureProcess> process_;
    bool started_ = false;
    bool released_ = false;
};

// The camera of the path at time t: over the plane (or image), or around the scene.
Camera path_camera(const CameraPath& path, double t, const StreamingSession& session, View view,
                   double aspect) {
    if (const SceneBox* box = session.scene_box()) return scene_camera(path.at(t, *box), *box);
    return Camera{.pose = path.at(t, session.plane_extent(), aspect),
                  .projection = projection_of(view)};
}

}  // namespace

std::uint64_t default_headless_frames(const ViewerOptions& options) {
    const CameraPath* path = find_camera_path(options.view, options.camera_path);
    if (!path || options.time_step_ms <= 0) return 1;
    return std::max<std::uint64_t>(
        1, std::uint64_t(std::llround(path->seconds * 1000.0 / options.time_step_ms)));
}

double fly_path(StreamingSession& session, const CameraPath& path, std::uint64_t frames,
                const ViewerOptions& options, FrameStats& stats, Hud* hud) {
    Camera camera;
    camera.projection = projection_of(options.view);
    const double aspect = double(options.width) / double(options.height);
    const double step = options.time_step_ms / 1000.0;
    double last_gpu_ms = 0;
    const auto start = Clock::now();
    auto last_progress = start;
    auto last_counters = start;
    auto frame_start = start;
    SessionFrame frame;
    stats.set_budget_pages(session.budget_pages());
    PressureSchedule pressure(options, session);
    finish_early_on_interrupt();
    for (std::uint64_t i = 0; i < frames; ++i) {
        // SIGINT: this frame is the last one (captured for the screenshot).
        const bool last = i + 1 == frames || interrupt_requested();
        pressure.at(seconds_between(start, Clock::now()));
        const double t = double(i) * step;
        camera = path_camera(path, t, session, options.view, aspect);
        // The previous frame's time as it was computed, so that each cut falls in one frame.
        const bool after_cut = i > 0 && path.cut_between(double(i - 1) * step, t);
        frame.view_projection = camera.view_projection(aspect);
        frame.mode = options.mode;
        frame.capture =
            !options.screenshot.empty() && last && (!options.settle || interrupt_requested());
        if (hud) {
            HudData data;
            data.backend = session.backend_name();
            data.device = session.device_name();
            data.texture = session.texture_name();
            data.camera = path.name;
            data.scene = session.scene_box() != nullptr;
            data.stats = &stats;
            data.counters = session.counters();
            data.budget_pages = session.budget_pages();
            data.gpu_ms = last_gpu_ms;
            data.pose = camera.pose;
            data.mode = options.mode;
            data.validation = options.validation;
            hud->begin_frame(step, options.width, options.height, false);
            hud->build(data);
            frame.overlay = [hud](VkCommandBuffer commands, const OverlayTarget& target) {
                hud->record(commands, target);
            };
        }
        const double submitted_at = seconds_between(start, Clock::now());
        const std::vector<CompletedSummary> completed = session.render(frame);
        // Before its completions: the frame just submitted may be among them (a fast device).
        stats.record_submitted(session.renderer().frames_submitted(), submitted_at, after_cut);
        for (const CompletedSummary& done : completed) {
            stats.record_completed(done);
            stats.record_rendered(seconds_between(start, Clock::now()));
            last_gpu_ms = done.gpu_ms;
        }
        const auto now = Clock::now();
        stats.record_frame(seconds_between(frame_start, now) * 1000.0);
        frame_start = now;
        if (hud || seconds_between(last_counters, now) >= 0.1) {
            stats.record_counters(seconds_between(start, now), session.counters());
            last_counters = now;
        }
        if (options.progress && seconds_between(last_progress, now) >= 1.0) {
            print_progress(i + 1, frames, stats, session.counters(), session.budget_pages());
            last_progress = now;
        }
        if (last) break;
    }
    return seconds_between(start, Clock::now());
}

int run_headless(const ViewerOptions& options, const Log& log,
                 std::shared_ptr<const SessionScene> scene) {
    const CameraPath& path = *find_camera_path(options.view, options.camera_path);
    const std::uint64_t frames = options.frames ? options.frames : default_headless_frames(options);
    SessionSettings settings = session_settings(options, log);
    settings.scene = std::move(scene);
    StreamingSession session(std::move(settings));
    std::fprintf(stderr, "vtpage-viewer: %s on %s, %s, %u x %u, camera path %s, %llu frames\n",
                 session.backend_name().c_str(), session.device_name().c_str(),
                 session.texture_name().c_str(), options.width, options.height, path.name.c_str(),
                 static_cast<unsigned long long>(frames));
    if (options.preload_all) session.preload_all(std::chrono::seconds(120));
    std::unique_ptr<Hud> hud;
    if (options.hud.value_or(false)) {
        hud = std::make_unique<Hud>(session.context(), session.renderer().colour_format(),
                                    frames_in_flight);
    }
    FrameStats stats(options.warmup_frames);
    const double seconds = fly_path(session, path, frames, options, stats, hud.get());
    for (const CompletedSummary& done : session.finish()) stats.record_completed(done);
    bool settled = false;
    if (options.settle && !interrupt_requested()) {
        // The last pose again until every page it needs is resident (a HUD shows its last
        // state).
        SessionFrame frame;
        const double aspect = double(options.width) / options.height;
        const Camera camera = path_camera(path, double(frames - 1) * options.time_step_ms / 1000.0,
                                          session, options.view, aspect);
        frame.view_projection = camera.view_projection(aspect);
        frame.mode = options.mode;
        if (hud) {
            frame.overlay = [&hud](VkCommandBuffer commands, const OverlayTarget& target) {
                hud->record(commands, target);
            };
        }
        SampleQuality settled_quality;
        settled = session.settle(frame, std::chrono::seconds(120), 200, &settled_quality);
        stats.record_settled_quality(settled_quality);
    }
    return finish_run(options, session, stats, seconds, settled, stdout);
}

}  // namespace vtpage::viewer
