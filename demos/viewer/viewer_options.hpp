// The viewer's settings, from its command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "camera_path.hpp"
#include "renderer/vulkan_renderer.hpp"
#include "vtpage/streaming/layout/tile_format.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::viewer {

struct ViewerOptions {
    std::string backend = "auto";          // auto | cuda | host
    std::string texture = "procedural";    // procedural, identity, or a baked texture file
    std::uint32_t texture_size_log2 = 20;  // of the procedural and identity textures
    std::uint32_t seed = 3;                // of the procedural texture (assets/terrain-512.png)
    vt::TileFormat texture_format = vt::TileFormat::rgba8;  // of the procedural texture
    std::size_t budget_mib = 1024;
    std::uint32_t width = 1280;
    std::uint32_t height = 720;
    bool headless = false;
    // Frames to render; 0: until Esc in a window, one pass of the camera path headless.
    std::uint64_t frames = 0;
    // A glTF 2.0 scene (.gltf or .glb) drawn instead of the plane: its images baked on first use
    // into scene_cache (again when an image is newer than its baked file), each streamed as a
    // virtual texture (View::scene).
    std::string scene;
    std::string scene_cache;  // empty: $XDG_CACHE_HOME/vtpage/scenes or ~/.cache/vtpage/scenes
    // The scene drawn through ordinary sampled images instead
    // (SessionSettings::reference_textures).
    bool reference_textures = false;
    // Where a scene's isotropic samples through vtpage take their level of detail: the device's
    // (read from a probe image, VulkanRendererSettings::scene_lod_from_device) or the formula's.
    bool lod_from_device = true;
    // Whether a scene's materials sample their agreeing slots as one material stack (on) or
    // each slot as a texture of its own (off), to compare the two (scene/scene_stacks.hpp).
    bool material_stacks = true;
    // The plane flown over in perspective, or the texture as an image (pan and zoom), or the
    // scene (set by --scene).
    View view = View::plane;
    // A scripted path of the view (camera_path.hpp); empty: the mouse and keyboard in a window,
    // headless "overview" (plane) or "image-tour" (image).
    std::string camera_path;
    // Headless: camera-path time per frame, so that runs are repeatable at any frame rate.
    double time_step_ms = 1000.0 / 60.0;
    std::string screenshot;  // PNG of the last frame
    std::string stats;       // JSON summary
    // A Chrome/Perfetto trace (TraceRecorder) written at exit; its rings keep the newest
    // trace_events events of each thread.
    std::string trace;
    std::size_t trace_events = std::size_t(1) << 16;
    bool validation = false;       // Khronos validation (and its synchronization checks)
    std::size_t workers = 2;       // streamer threads
    std::size_t batch_pages = 16;  // pages a worker commits and fills together
    bool vsync = true;             // window only
    std::optional<bool> hud;       // unset: on in a window, off headless
    RenderMode mode = RenderMode::textured;
    std::uint32_t feedback_divisor = 4;
    bool deferred_texturing = true;  // VulkanRendererSettings::deferred_texturing
    std::uint32_t anisotropy = 1;    // VulkanRendererSettings::max_anisotropy
    bool feedback_thread = true;     // SessionSettings::feedback_thread
    // The identity texture, checked on every frame (VulkanRendererSettings::identity_check):
    // violations are counted in the summary and the stats, and make the exit status 1.
    bool identity_check = false;
    std::size_t evict_ahead_pages = 64;      // PageTableSettings::evict_ahead_pages
    std::uint64_t recent_frames = 8;         // StreamerSettings::recent_frames
    std::uint64_t refault_hold_frames = 64;  // StreamerSettings::refault_hold_frames
    bool pack_tails = true;                  // StreamerSettings::pack_tails
    bool pack_levels = true;                 // StreamerSettings::pack_levels
    std::size_t decode_threads = 0;          // StreamerFileReads::decode_threads (0: the default)
    // StreamerFileReads::decode_priority (normal | low | idle)
    std::string decode_priority = "low";
    std::size_t page_cache_copiers = 0;  // StreamerFileReads::page_cache_copiers (0: automatic)
    std::uint32_t tile_levels = 0;       // vt::TileLevelSource's, for every texture (0: none)
    std::size_t decoded_pages_kept = vt::StreamerFileReads{}.decoded_pages_kept;
    std::size_t packed_level_pages = 0;  // StreamerSettings::packed_level_pages (0: automatic)
    bool tile_neighbours = true;         // vt::FeedbackSettings::tile_neighbours
    // Headless: before the last frame, keep rendering its pose until every page it asks for is
    // resident (the settled image, for comparisons).
    bool settle = false;
    // Make every page of the texture resident before the first frame (small textures; the
    // reference a streamed image is compared with).
    bool preload_all = false;
    // The streaming governor (vt::StreamingGovernor): memory kept free for other processes,
    // the budget's floor, and a frame-time target (0: none).
    bool governor = false;
    std::size_t headroom_mib = 512;
    std::size_t min_budget_mib = 64;
    double frame_ms_target = 0;
    // Pages made visible per frame at most (VulkanIndirectionTable::set_publish_limit; 0: no
    // limit); with the governor's limit, the smaller of the two.
    std::size_t upload_pages_per_frame = 0;
    std::string read_backend =
        "automatic";  // StreamerFileReads::backend (automatic | io_uring | threads)
    // Headless: another process (vtpage-gpu-pressure) takes this much device memory from
    // pressure_at seconds into the flight for pressure_for seconds (0 MiB: none).
    std::size_t pressure_mib = 0;
    std::size_t pressure_leave_free_mib = 0;  // instead: all but this much of the free memory
    bool pressure() const noexcept { return pressure_mib > 0 || pressure_leave_free_mib > 0; }
    double pressure_at = 2.0;
    double pressure_for = 4.0;
    std::string pressure_tool;  // empty: found beside the viewer
    // Frames left out of the frame-time percentiles (start-up: first uploads, pipelines).
    std::uint64_t warmup_frames = 10;
    bool progress = true;  // headless: a progress line every second
};

// argv parsed: the options, or the exit code to leave with at once (0 after --help; 2 for bad
// flags, with `message` saying why).
struct ParsedOptions {
    std::optional<ViewerOptions> options;
    int exit_code = 0;
    std::string message;  // the help text (exit 0) or the error (exit 2)
};
ParsedOptions parse_viewer_options(int argc, const char* const* argv);

std::string to_string(RenderMode mode);
std::string to_string(View view);

}  // namespace vtpage::viewer
