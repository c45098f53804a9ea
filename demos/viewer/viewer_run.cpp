#include "viewer_run.hpp"

#include <signal.h>

#include <atomic>
#include <fstream>

#include "renderer/vulkan_screenshot.hpp"

namespace vtpage::viewer {

SessionSettings session_settings(const ViewerOptions& o, const Log& log) {
    SessionSettings s;
    s.backend = o.backend;
    s.texture = o.texture;
    s.texture_size_log2 = o.texture_size_log2;
    s.seed = o.seed;
    s.texture_format = o.texture_format;
    s.budget_bytes = o.budget_mib * std::size_t(1024 * 1024);
    s.width = o.width;
    s.height = o.height;
    s.feedback_divisor = o.feedback_divisor;
    s.deferred_texturing = o.deferred_texturing;
    s.anisotropy = o.anisotropy;
    s.reference_textures = o.reference_textures;
    s.scene_lod_from_device = o.lod_from_device;
    s.feedback_thread = o.feedback_thread;
    if (o.governor) {
        vt::StreamingGovernorSettings governor;
        governor.headroom_bytes = o.headroom_mib << 20;
        governor.min_budget_bytes = (o.min_budget_mib / 2 * 2) << 20;  // whole pages
        governor.frame_ms_target = o.frame_ms_target;
        s.governor = governor;
    }
    s.upload_pages_per_frame = o.upload_pages_per_frame;
    s.read_backend = o.read_backend == "io_uring"  ? vt::FileReadBackend::io_uring
                     : o.read_backend == "threads" ? vt::FileReadBackend::threads
                                                   : vt::FileReadBackend::automatic;
    s.identity_check = o.identity_check;
    s.evict_ahead_pages = o.evict_ahead_pages;
    s.recent_frames = o.recent_frames;
    s.refault_hold_frames = o.refault_hold_frames;
    s.pack_tails = o.pack_tails;
    s.pack_levels = o.pack_levels;
    s.decode_threads = o.decode_threads;
    s.decode_priority = o.decode_priority == "normal" ? vt::DecodeThreadPriority::normal
                        : o.decode_priority == "idle" ? vt::DecodeThreadPriority::idle
                                                      : vt::DecodeThreadPriority::low;
    s.decode_frame_ms_target = o.frame_ms_target;
    s.page_cache_copiers = o.page_cache_copiers;
    s.tile_levels = o.tile_levels;
    s.decoded_pages_kept = o.decoded_pages_kept;
    s.packed_level_pages = o.packed_level_pages;
    s.tile_neighbours = o.tile_neighbours;
    s.frames_in_flight = frames_in_flight;
    s.workers = o.workers;
    s.batch_pages = o.batch_pages;
    s.validation = o.validation;
    s.log = log;
    return s;
}

namespace {

std::atomic<bool> interrupted{false};

void on_interrupt(int) { interrupted = true; }

}  // namespace

void finish_early_on_interrupt() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, nullptr);
}

bool interrupt_requested() noexcept { return interrupted.load(); }

int finish_run(const ViewerOptions& options, const StreamingSession& session,
               const FrameStats& stats, double seconds, bool settled, std::FILE* out) {
    RunReport report = make_report(options, session, stats, seconds);
    report.settled = settled;
    int status = 0;
    if (!options.screenshot.empty()) {
        if (session.last_capture().empty()) {
            std::fprintf(stderr, "vtpage-viewer: no frame was captured for the screenshot\n");
            status = 1;
        } else {
            write_png(options.screenshot, session.capture_width(), session.capture_height(),
                      session.last_capture());
            std::fprintf(out, "screenshot: %s (%u x %u)\n", options.screenshot.c_str(),
                         session.capture_width(), session.capture_height());
        }
    }
    if (!options.stats.empty()) {
        std::ofstream file(options.stats);
        file << to_json(report).dump(2) << '\n';
        if (!file) {
            throw Error(Errc::io_error, "vtpage-viewer", "cannot write the stats",
                        "path=" + options.stats);
        }
        std::fprintf(out, "stats: %s\n", options.stats.c_str());
    }
    std::fputs(summary_text(report).c_str(), out);
    std::fflush(out);
    if (report.validation && report.validation_errors + report.validation_warnings > 0) {
        std::fprintf(stderr,
                     "vtpage-viewer: the validation layer reported %llu errors and %llu "
                     "warnings (printed above)\n",
                     static_cast<unsigned long long>(report.validation_errors),
                     static_cast<unsigned long long>(report.validation_warnings));
        status = 1;
    }
    if (report.identity_check && report.identity.violations > 0) {
        std::fprintf(stderr,
                     "vtpage-viewer: the identity check found %llu pixels that read another "
                     "page's words, in %llu frames (the first: frame %llu)\n",
                     static_cast<unsigned long long>(report.identity.violations),
                     static_cast<unsigned long long>(report.identity.frames_with_violations),
                     static_cast<unsigned long long>(report.identity.first_violating_frame));
        status = 1;
    }
    if (interrupt_requested()) {
        std::fprintf(stderr,
                     "vtpage-viewer: interrupted by SIGINT: the statistics and screenshot cover "
                     "the frames flown until then\n");
        status = 1;
    } else if (options.settle && !settled) {
        std::fprintf(stderr, "vtpage-viewer: the last view did not settle in time\n");
        status = 1;
    }
    // Bad input outranks what follows from it (a view that cannot settle without its pages).
    if (session.input_errors().count() > 0) {
        std::fprintf(stderr, "vtpage-viewer: %s\n",
                     session.input_errors().summary(options.texture).c_str());
        status = 2;
    }
    return status;
}

}  // namespace vtpage::viewer
