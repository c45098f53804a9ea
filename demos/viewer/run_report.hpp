// The summary of a run: the stats JSON (--stats), the table printed at the end of a headless
// run, and the benchmark's goal line.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "frame_stats.hpp"
#include "streaming_session.hpp"
#include "viewer_options.hpp"

namespace vtpage::viewer {

// The H100 goal of the benchmark flight: frame time p99 at most this while streaming at least
// this many pages per second.
inline constexpr double goal_p99_ms = 5.0;
inline constexpr double goal_pages_per_second = 2000.0;

struct RunReport {
    std::string backend, device, driver, texture, camera_path, mode;
    // A --scene's device memory beside the budget: its geometry, and with --reference-textures
    // the images of every level (the hardware reference's textures).
    bool scene = false, reference_textures = false;
    std::string lod_from;  // --lod-from: "device" or "formula"
    std::uint64_t scene_geometry_bytes = 0, reference_texture_bytes = 0;
    // Its material stacks, and the material slots drawn through them.
    std::size_t scene_stacks = 0, scene_stacked_slots = 0;
    std::uint32_t width = 0, height = 0;
    std::size_t budget_mib = 0, budget_pages = 0;
    std::uint64_t frames = 0, warmup_frames = 0;
    std::uint64_t presented_frames = 0;  // shown in a window
    double seconds = 0;                  // the frame loop, first frame to last
    double startup_seconds = 0;          // set-up before the first frame (pool warm-up included)
    double first_frame_seconds = 0;      // set-up until the first frame was rendered
    Percentiles frame_ms, gpu_ms;
    Percentiles textured_pass_ms;  // GPU: the colour pass that samples the texture
    // CPU on the render thread: the renderer's call, handing the feedback over (copy_ms of it)
    Percentiles render_ms, feedback_ms, copy_ms;
    // CPU on the feedback worker's thread, per feedback; hand-off to processed
    Percentiles process_ms, request_ms, complete_ms, handoff_ms;
    std::uint64_t feedback_coalesced = 0;  // feedbacks replaced by newer ones before processing
    std::uint64_t pages_committed = 0, pages_evicted = 0;
    std::uint64_t pages_streamed = 0, bytes_streamed = 0;  // filled and reported ready
    double pages_per_second = 0, bytes_per_second = 0;     // over `seconds`
    std::size_t resident_pages = 0;
    std::uint64_t resident_texels = 0;  // what the resident pages hold, at the end
    // Pages that hold mip tails, and the tails packed into another texture's tail page.
    std::size_t tail_pages = 0, packed_tails = 0;
    std::size_t level_pages = 0, packed_levels = 0;
    std::uint64_t evicted_levels = 0, released_level_pages = 0;
    // Each texture: its pages, and what of it was resident at the end (a set has several).
    std::vector<SessionTexture> textures;
    // Evicted pages held back for frames in flight (counted in the budget): now, at most, ever.
    std::size_t deferred_pages = 0, deferred_peak = 0;
    std::uint64_t deferred_total = 0;
    PagePoolStatistics pool;
    std::uint64_t requests = 0, dropped_requests = 0, withdrawn_requests = 0;
    std::uint64_t superseded_requests = 0;
    ResidencyTotals residency;          // how much of what is resident the view sampled
    BudgetTotals budget;                // the view against the budget, frame by frame
    std::uint64_t refaulted_pages = 0;  // asked for again within 8 frames of their eviction
    std::uint64_t held_pages = 0;       // ... of which held while over budget
    std::uint64_t held_requests = 0;    // requests for held pages, not queued
    std::uint64_t budget_stalls = 0, failed_pages = 0;
    // Pages read from baked files through the streamer's read pipeline (zero for procedural
    // textures): read and decoded, stored bytes read, read buffers at their peak.
    vt::StreamerStatistics::FileReads file_reads;
    // The decode threads' governor, where it ran (file_reads has the active count at the end).
    bool decode_threads_governed = false;
    vt::DecodeThreadGovernorStatistics decode_governor;
    std::uint64_t indirection_uploads = 0, indirection_entries = 0, scattered_uploads = 0;
    std::uint64_t limited_uploads = 0;  // uploads that left pages for later (the limit)
    // Request to visible (RequestLatencyTracker), the streamer's queue and cancelled requests,
    // the pages made visible per frame (the loop's frames; the most over every frame, settling
    // included) and the limit asked for (--upload-pages-per-frame).
    vt::RequestLatencyStatistics latency;
    Percentiles queue_depth, made_visible;
    std::uint64_t cancelled_requests = 0, pages_made_visible = 0;
    std::size_t most_made_visible = 0, upload_pages_per_frame = 0;
    bool validation = false;
    std::uint64_t validation_errors = 0, validation_warnings = 0, validation_messages = 0;
    bool settle_requested = false, settled = false;
    bool identity_check = false;
    IdentityCheckTotals identity;
    // What a user sees of streaming: sample quality per frame, and time to full detail after
    // each camera cut (closed as the run ended).
    QualityFigures quality;
    std::vector<CutRecovery> cuts;
    FullDetailFigures full_detail;
    // The streaming governor (--governor): its figures, its last decision and every frame it
    // governed (the pressure benchmark's timeline).
    bool governed = false;
    vt::StreamingGovernorStatistics governor;
    vt::GovernorDecision governor_decision;
    std::vector<GovernorSample> governor_timeline;
    double frame_ms_target = 0;
    // --pressure-mib: what the other process took, when (seconds into the flight) and how long.
    std::size_t pressure_mib = 0, pressure_leave_free_mib = 0;
    double pressure_at = 0, pressure_for = 0;

    // The goal applies to the benchmark flight; met or not, for the goal line.
    bool goal_applies() const { return camera_path == "benchmark"; }
    bool goal_met() const {
        return frame_ms.p99 <= goal_p99_ms && pages_per_second >= goal_pages_per_second;
    }
};

RunReport make_report(const ViewerOptions& options, const StreamingSession& session,
                      const FrameStats& stats, double seconds);
nlohmann::json to_json(const RunReport& report);
// A Markdown table of the figures that matter, and the goal line for the benchmark flight.
std::string summary_text(const RunReport& report);

}  // namespace vtpage::viewer
