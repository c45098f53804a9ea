#include "viewer_options.hpp"

#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "camera_path.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"

namespace vtpage::viewer {

namespace {

const std::map<std::string, RenderMode> render_modes = {
    {"textured", RenderMode::textured},
    {"residency", RenderMode::residency},
    {"mips", RenderMode::mip_levels},
};

const std::map<std::string, View> views = {
    {"plane", View::plane},
    {"image", View::image},
};

// The formats the procedural texture can be made in.
const std::map<std::string, vt::TileFormat> texture_formats = {
    {"rgba8", vt::TileFormat::rgba8},
    {"bc1", vt::TileFormat::bc1},
    {"bc3", vt::TileFormat::bc3},
};

// What is wrong with a --texture path, in words; empty for a regular file or a folder.
std::string texture_path_problem(const std::string& value) {
    const std::string hint =
        " (give 'procedural', 'identity', a baked texture, a folder of them or a texture set "
        "manifest)";
    struct stat status {};
    if (::stat(value.c_str(), &status) != 0) {
        const int error = errno;
        if (error == ENOENT) return "no such file or folder: " + value + hint;
        if (error == ELOOP) return value + " is a loop of symbolic links" + hint;
        return "cannot use " + value + ": " + errno_message(error) + hint;
    }
    if (S_ISREG(status.st_mode) || S_ISDIR(status.st_mode)) return {};
    return value + " is not a regular file or folder (a FIFO, device or socket)" + hint;
}

std::string path_names(View view) {
    std::string names;
    for (const CameraPath& path : camera_paths(view)) {
        names += (names.empty() ? "" : ", ") + path.name;
    }
    return names;
}

std::string path_names() {
    return path_names(View::plane) + "; " + path_names(View::image) + "; with --scene " +
           path_names(View::scene);
}

// A path flies its own view: the flights perspective, the tours orthographic.
void check_path_view(const std::string& path, View view) {
    if (path.empty() || find_camera_path(view, path)) return;
    throw CLI::ValidationError("--camera-path", "'" + path + "' is not a path of --view " +
                                                    to_string(view) + " (" + path_names(view) +
                                                    ")");
}

// An output file's folder must exist: better said now than after a long run.
void check_output(const std::string& flag, const std::string& path) {
    if (path.empty()) return;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
        throw CLI::ValidationError(flag, "the folder " + parent.string() + " does not exist");
    }
}

// The --help groups, each with its flags (every flag but --help and --version). CLI11 lists the
// groups in the order of their first flag's definition.
const std::vector<std::pair<std::string, std::vector<std::string>>> option_groups = {
    {"Scene",
     {"--texture", "--scene", "--scene-cache", "--reference-textures", "--material-stacks",
      "--lod-from", "--texture-size-log2", "--texture-format", "--seed", "--view", "--mode",
      "--forward-texturing", "--anisotropy"}},
    {"Budget and pressure",
     {"--budget-mib", "--governor", "--headroom-mib", "--min-budget-mib", "--frame-ms-target",
      "--pressure-mib", "--pressure-leave-free-mib", "--pressure-at", "--pressure-for",
      "--pressure-tool"}},
    {"Window and image", {"--width", "--height", "--vsync", "--hud"}},
    {"Headless run",
     {"--headless", "--frames", "--camera-path", "--time-step-ms", "--settle", "--warmup-frames",
      "--quiet"}},
    {"Checks and output",
     {"--screenshot", "--stats", "--trace", "--trace-events", "--validation", "--identity-check"}},
    {"Streaming",
     {"--backend", "--workers", "--batch-pages", "--evict-ahead", "--recent-frames",
      "--refault-hold-frames", "--no-pack-tails", "--no-pack-levels", "--decode-threads",
      "--decode-priority", "--page-cache-copiers", "--tile-levels", "--decoded-pages-kept",
      "--packed-level-pages", "--no-tile-neighbours", "--preload-all", "--upload-pages-per-frame",
      "--read-backend"}},
    {"Feedback", {"--feedback-divisor", "--feedback-on-render-thread"}},
};

void group_options(CLI::App& app) {
    for (const auto& [group, flags] : option_groups) {
        for (const std::string& flag : flags) app.get_option(flag)->group(group);
    }
}

// The check reads the identity texture at the positions of the deferred textured pass.
void check_identity_check(ViewerOptions& o, bool texture_given, const std::string& mode) {
    if (texture_given && o.texture != "identity") {
        throw CLI::ValidationError("--identity-check", "checks the identity texture, not " +
                                                           o.texture + " (leave --texture out)");
    }
    if (!o.deferred_texturing) {
        throw CLI::ValidationError("--identity-check", "needs deferred texturing");
    }
    if (mode != "textured") {
        throw CLI::ValidationError("--identity-check",
                                   "checks textured frames, not --mode " + mode);
    }
    o.texture = "identity";
}

// A scene is drawn on its own: not with a texture, a view of the plane or the identity check.
void check_scene(const ViewerOptions& o, bool texture_given, const std::string& view) {
    if (texture_given) {
        throw CLI::ValidationError("--scene", "draws the scene's own images: leave --texture out");
    }
    if (view != "plane") {
        throw CLI::ValidationError("--scene", "is its own view: leave --view out");
    }
    if (o.identity_check) {
        throw CLI::ValidationError("--scene", "cannot be checked by --identity-check");
    }
    const std::string extension = std::filesystem::path(o.scene).extension().string();
    if (extension != ".gltf" && extension != ".glb") {
        throw CLI::ValidationError("--scene",
                                   "'" + o.scene.substr(0, 80) + "' is not a .gltf or .glb file");
    }
    std::error_code error;
    if (!std::filesystem::is_regular_file(o.scene, error)) {
        throw CLI::ValidationError("--scene", "no such file: " + o.scene.substr(0, 200));
    }
}

}  // namespace

std::string to_string(View view) {
    if (view == View::scene) return "scene";
    return view == View::image ? "image" : "plane";
}

std::string to_string(RenderMode mode) {
    for (const auto& [name, value] : render_modes) {
        if (value == mode) return name;
    }
    return "unknown";
}

ParsedOptions parse_viewer_options(int argc, const char* const* argv) {
    ViewerOptions o;
    CLI::App app{
        "vtpage-viewer: flies over a virtual texture streamed into GPU pages on demand and "
        "sampled by Vulkan straight out of them. In a window: WASD or the arrows move, drag "
        "with the left mouse button to look, the wheel or Q/E change altitude, Shift is "
        "faster, M cycles the overlay (textured, residency, mip levels), H toggles the HUD, "
        "P plays the next camera path, Esc quits. With --view image: an orthographic view of "
        "the texture; drag or WASD/arrows pan, the wheel zooms about the cursor, Q/E or -/+ "
        "zoom, R frames the whole image. Headless (--headless): a scripted camera "
        "path, a progress line every second and a summary at the end."};
    app.set_help_flag("-h,--help", "Print this help and exit");
    auto* texture_flag =
        app.add_option("--texture", o.texture,
                       "'procedural' (a 2^size terrain made on the fly), 'identity' (every texel "
                       "a hash of its own page and place: noise, for --identity-check), a "
                       "baked texture file (vtpage-bake), or a texture set drawn side by side: "
                       "a folder of baked files or a manifest (*.json, docs/viewer.md)")
            ->check([](const std::string& value) -> std::string {
                if (value == "procedural" || value == "identity") return {};
                return texture_path_problem(value);
            })
            ->capture_default_str();
    auto* scene_flag = app.add_option(
        "--scene", o.scene,
        "A glTF 2.0 scene (.gltf or .glb) drawn instead of the plane: its meshes, materials and "
        "images, each image baked on first use into --scene-cache and streamed as a virtual "
        "texture (camera paths: orbit, approach, flythrough)");
    app.add_flag("--reference-textures", o.reference_textures,
                 "--scene: draw it through ordinary sampled images instead, every level resident "
                 "in the baked formats, a VkSampler with each texture's address modes and "
                 "--anisotropy: what a renderer has without vtpage, and the reference vtpage's "
                 "images are compared with");
    std::string lod_from = "device";
    app.add_option("--lod-from", lod_from,
                   "--scene: where vtpage's samples take their level of detail: the device's "
                   "(device, the default: read from a small mipmapped image, so that they filter "
                   "between the levels an ordinary image of the texture would, with its weights) "
                   "or the exact formula's (formula)")
        ->check(CLI::IsMember({"device", "formula"}))
        ->capture_default_str();
    std::string material_stacks = "on";
    app.add_option("--material-stacks", material_stacks,
                   "--scene: sample the slots of a material that share a size, wrap and uv "
                   "transform as one material stack (on, the default), or each as a texture of "
                   "its own (off)")
        ->check(CLI::IsMember({"on", "off"}));
    app.add_option("--scene-cache", o.scene_cache,
                   "Where --scene's baked images are kept (default: $XDG_CACHE_HOME/vtpage/scenes "
                   "or ~/.cache/vtpage/scenes)");
    app.add_option("--texture-size-log2", o.texture_size_log2,
                   "Procedural and identity textures: 2^N texels on a side (20: 1M x 1M)")
        ->check(app::count_in(8, 20))
        ->capture_default_str();
    std::string texture_format = "rgba8";
    auto* format_flag =
        app.add_option("--texture-format", texture_format,
                       "Procedural texture: its tiles, rgba8, bc1 or bc3 (8.5x and 4.3x the "
                       "texels per page)")
            ->check([](const std::string& value) -> std::string {
                if (texture_formats.count(value)) return {};
                return "unknown texture format '" + value + "' (rgba8, bc1, bc3)";
            })
            ->capture_default_str();
    app.add_option("--seed", o.seed, "Procedural texture: its seed")
        ->check(app::any_count<decltype(o.seed)>())
        ->capture_default_str();
    app.add_option("--budget-mib", o.budget_mib, "GPU memory for texture pages, in MiB")
        ->check(app::count_in(16, std::uint64_t(1) << 22))
        ->capture_default_str();
    app.add_option("--width", o.width, "Image width in pixels")
        ->check(app::count_in(16, 16384))
        ->capture_default_str();
    app.add_option("--height", o.height, "Image height in pixels")
        ->check(app::count_in(16, 16384))
        ->capture_default_str();
    app.add_flag("--headless", o.headless,
                 "No window: render offscreen (no display or window system needed)");
    app.add_option("--frames", o.frames,
                   "Frames to render (0: until Esc in a window; headless, one pass of the "
                   "camera path)")
        ->check(app::count_in(0, std::uint64_t(1) << 40));
    app.add_option("--camera-path", o.camera_path,
                   "A scripted flight: " + path_names() +
                       " (window: plays it in a loop; headless default: overview)")
        ->check([](const std::string& value) -> std::string {
            if (find_camera_path(View::plane, value) || find_camera_path(View::image, value) ||
                find_camera_path(View::scene, value)) {
                return {};
            }
            return "unknown camera path '" + value + "' (" + path_names() + ")";
        });
    std::string view = "plane";
    app.add_option("--view", view,
                   "plane: fly over the texture in perspective; image: the texture as an image, "
                   "top-down and orthographic, panned and zoomed (headless path: image-tour)")
        ->check([](const std::string& value) -> std::string {
            if (views.count(value)) return {};
            return "unknown view '" + value + "' (plane, image)";
        })
        ->capture_default_str();
    app.add_option("--time-step-ms", o.time_step_ms,
                   "Headless: camera-path time per frame, so that a run is the same at any "
                   "frame rate (at least 0.01 ms, so that a path ends within 2^40 frames)")
        ->check(app::number_in(0.01, 10000.0))
        ->capture_default_str();
    app.add_option("--screenshot", o.screenshot, "Write the last frame as a PNG");
    app.add_option("--stats", o.stats, "Write the run's statistics as JSON");
    app.add_option("--trace", o.trace,
                   "Write a Chrome/Perfetto JSON trace of the run's threads (docs/trace.md) at "
                   "exit");
    app.add_option("--trace-events", o.trace_events,
                   "--trace: the newest events kept per thread (older ones are dropped)")
        ->check(app::count_in(16, std::size_t(1) << 24))
        ->capture_default_str();
    app.add_flag("--validation", o.validation,
                 "Khronos validation layer (with synchronization validation) on: every "
                 "message is counted and printed, and any makes the exit status 1");
    app.add_option("--backend", o.backend, "Memory backend: auto (cuda where a GPU is), cuda, host")
        ->check(CLI::IsMember({"auto", "cuda", "host"}))
        ->capture_default_str();
    app.add_option("--workers", o.workers, "Streamer worker threads")
        ->check(app::count_in(1, 64))
        ->capture_default_str();
    app.add_option("--batch-pages", o.batch_pages, "Pages a worker commits and fills together")
        ->check(app::count_in(1, 1024))
        ->capture_default_str();
    app.add_flag("--vsync,!--no-vsync", o.vsync, "Window: wait for the display's refresh")
        ->capture_default_str();
    bool hud = false;
    auto* hud_flag = app.add_flag("--hud,!--no-hud", hud,
                                  "Draw the HUD (default: in a window yes, headless no)");
    std::string mode = "textured";
    app.add_option("--mode", mode, "What the plane shows: textured, residency, mips")
        ->check(CLI::IsMember({"textured", "residency", "mips"}))
        ->capture_default_str();
    app.add_flag("!--forward-texturing", o.deferred_texturing,
                 "Sample the texture in the raster pass rather than in a compute pass over the "
                 "positions it records (same pixels; compare their GPU time)");
    app.add_option("--anisotropy", o.anisotropy,
                   "Anisotropic filtering of up to N probes along each pixel's footprint, in the "
                   "image and in the feedback (1: trilinear)")
        ->check(app::count_in(1, 16))
        ->capture_default_str();
    app.add_flag("!--feedback-on-render-thread", o.feedback_thread,
                 "Wait for the feedback's processing on the render thread after each frame "
                 "instead of leaving it to the feedback thread (compare their frame times)");
    app.add_flag("--identity-check", o.identity_check,
                 "Stream the identity texture and check every frame at full resolution: each "
                 "pixel's unfiltered reads must be the page and texel its coordinates map to "
                 "(or a coarser one's); violations are counted and make the exit status 1");
    app.add_option("--evict-ahead", o.evict_ahead_pages,
                   "Pages evicted ahead while streaming at a full budget, so that they have "
                   "ripened (no frame in flight reaches them) when the next commits need them")
        ->check(app::count_in(0, 1 << 20))
        ->capture_default_str();
    app.add_option("--recent-frames", o.recent_frames,
                   "The view keeps the pages it asked for in this many frames: new requests do "
                   "not evict them (a coarser level may evict a finer one), so that a view over "
                   "budget keeps what it samples instead of reading its pages again and again")
        ->check(app::count_in(1, 1024))
        ->capture_default_str();
    app.add_option("--refault-hold-frames", o.refault_hold_frames,
                   "A page asked for again soon after its eviction while the view is over budget "
                   "is not read again for this many frames (or until the view fits): the view "
                   "stops chasing the pages it traded away. 0: never held")
        ->check(app::count_in(0, 65536))
        ->capture_default_str();
    app.add_flag("!--no-pack-tails", o.pack_tails,
                 "Give each texture's mip tail a page of its own instead of packing the tails of "
                 "many textures into shared pages");
    app.add_flag("!--no-pack-levels", o.pack_levels,
                 "Give each coarse level (a level that fits one page with room to spare) a page "
                 "of its own instead of packing those of many textures into shared pages");
    app.add_option("--decode-threads", o.decode_threads,
                   "Threads that decode pages read from files (0: automatic: a thread for each "
                   "usable core but one, as many taking pages as the frames allow)")
        ->check(app::count_in(0, 64))
        ->capture_default_str();
    app.add_option("--decode-priority", o.decode_priority,
                   "How the decode threads are scheduled: low (SCHED_BATCH, nice +10: the "
                   "render thread takes a core from them when it wakes), idle (SCHED_IDLE: "
                   "only cores nothing else wants), normal (as the render thread)")
        ->check(CLI::IsMember({"normal", "low", "idle"}))
        ->capture_default_str();
    app.add_option("--page-cache-copiers", o.page_cache_copiers,
                   "io_uring reads: threads that copy reads the page cache holds, beside the "
                   "ring (0: automatic: a quarter of the usable cores, 1 to 4)")
        ->check(app::count_in(0, vt::FileReadQueueSettings::max_page_cache_copiers))
        ->capture_default_str();
    app.add_option("--tile-levels", o.tile_levels,
                   "Stream the finest N levels of each texture a tile at a time (each tile its "
                   "own page, placed in pages shared among tiles) instead of 32 or 64 tiles a "
                   "page (0: none)")
        ->check(app::count_in(0, vt::max_mips))
        ->capture_default_str();
    app.add_option("--decoded-pages-kept", o.decoded_pages_kept,
                   "Pages of files kept decoded in host memory (2 MiB each) for the tiles of them "
                   "asked for later (with --tile-levels; 0: none)")
        ->check(app::count_in(0, vt::StreamerFileReads::max_decoded_pages_kept))
        ->capture_default_str();
    app.add_flag("!--no-tile-neighbours", o.tile_neighbours,
                 "With --tile-levels: ask only for the tiles sampled, not also for the 8 around "
                 "each sampled tile of a tile level (vt::FeedbackSettings::tile_neighbours)");
    app.add_option("--packed-level-pages", o.packed_level_pages,
                   "Pages that may hold packed coarse levels and tiles of tile levels (0: "
                   "automatic: a quarter of the budget, three quarters with --tile-levels)")
        ->check(app::count_in(0, std::size_t(1) << 20))
        ->capture_default_str();
    app.add_option("--feedback-divisor", o.feedback_divisor,
                   "The feedback pass renders at 1/N of the size")
        ->check(app::count_in(1, 16))
        ->capture_default_str();
    app.add_flag("--settle", o.settle,
                 "Headless: render the last pose until every page it needs is resident, then "
                 "take the screenshot");
    app.add_flag("--preload-all", o.preload_all,
                 "Make every page of the texture resident before the first frame (small "
                 "textures: a reference image without streaming)");
    app.add_option("--warmup-frames", o.warmup_frames,
                   "Frames left out of the frame-time percentiles")
        ->check(app::count_in(0, std::uint64_t(1) << 40))
        ->capture_default_str();
    app.add_flag("--governor", o.governor,
                 "Adapt to pressure: give pages back when the device's free memory falls "
                 "below --headroom-mib and take them again when it returns; with "
                 "--frame-ms-target, limit the pages made visible per frame and bias the "
                 "level of detail to hold that frame time");
    app.add_option("--headroom-mib", o.headroom_mib,
                   "Governor: device memory kept free for other processes")
        ->check(app::count_in(1, 1 << 24))
        ->capture_default_str();
    auto* min_budget_flag =
        app.add_option("--min-budget-mib", o.min_budget_mib,
                       "Governor: the budget never goes below this (nor above --budget-mib)")
            ->check(app::count_in(2, 1 << 24))
            ->capture_default_str();
    app.add_option("--frame-ms-target", o.frame_ms_target,
                   "Governor: the frame time to hold, in ms (0: memory only); the decode "
                   "threads' governor holds it too, with or without --governor")
        ->check(app::number_in(0.0, 1000.0))
        ->capture_default_str();
    app.add_option("--read-backend", o.read_backend,
                   "How pages are read from files: automatic (io_uring where the kernel allows "
                   "it), io_uring, threads (pread on a thread per read in flight)")
        ->check(CLI::IsMember({"automatic", "io_uring", "threads"}))
        ->capture_default_str();
    app.add_option("--upload-pages-per-frame", o.upload_pages_per_frame,
                   "Pages a frame may make visible at most, so that a burst of ready pages "
                   "reaches the image over several frames instead of stalling one (0: no limit; "
                   "with --governor's limit, the smaller)")
        ->check(app::count_in(0, 1 << 20))
        ->capture_default_str();
    app.add_option("--pressure-mib", o.pressure_mib,
                   "Headless: another process (vtpage-gpu-pressure) takes this much device "
                   "memory during the flight (CUDA backend)")
        ->check(app::count_in(1, 1 << 24));
    app.add_option("--pressure-leave-free-mib", o.pressure_leave_free_mib,
                   "Headless: the other process takes all but this much of the device's free "
                   "memory instead (CUDA backend)")
        ->check(app::count_in(1, 1 << 24))
        ->excludes("--pressure-mib");
    app.add_option("--pressure-at", o.pressure_at,
                   "Seconds into the flight when the other process starts taking memory")
        ->check(app::number_in(0.0, 3600.0))
        ->capture_default_str();
    app.add_option("--pressure-for", o.pressure_for,
                   "Seconds the other process holds its memory before releasing it")
        ->check(app::number_in(0.0, 3600.0))
        ->capture_default_str();
    app.add_option("--pressure-tool", o.pressure_tool,
                   "The vtpage-gpu-pressure program (default: beside the viewer or in the "
                   "build tree)");
    bool quiet = false;
    app.add_flag("--quiet", quiet, "Headless: no progress lines");
    app::add_version_flag(app, "vtpage-viewer");
    group_options(app);

    ParsedOptions parsed;
    try {
        app.parse(argc, argv);
        o.material_stacks = material_stacks == "on";
        o.lod_from_device = lod_from == "device";
        check_output("--screenshot", o.screenshot);
        check_output("--stats", o.stats);
        check_path_view(o.camera_path, o.scene.empty() ? views.at(view) : View::scene);
        if (o.settle && !o.headless) {
            throw CLI::ValidationError("--settle", "needs --headless");
        }
        if (format_flag->count() > 0 && o.texture != "procedural") {
            throw CLI::ValidationError("--texture-format",
                                       "is for the procedural texture (a baked file has its own)");
        }
        if (o.identity_check) check_identity_check(o, texture_flag->count() > 0, mode);
        if (scene_flag->count() > 0) check_scene(o, texture_flag->count() > 0, view);
        if (!o.material_stacks && o.scene.empty()) {
            throw CLI::ValidationError("--material-stacks", "is for a scene: give --scene");
        }
        if (o.reference_textures && o.scene.empty()) {
            throw CLI::ValidationError("--reference-textures", "draws a scene: give --scene");
        }
        if (o.pressure() && !o.headless) {
            throw CLI::ValidationError("--pressure-mib", "needs --headless");
        }
        if (min_budget_flag->count() > 0 && o.min_budget_mib > o.budget_mib) {
            throw CLI::ValidationError("--min-budget-mib", "is above --budget-mib");
        }
    } catch (const CLI::CallForHelp&) {
        parsed.message = app.help();
        return parsed;
    } catch (const CLI::CallForVersion& version) {
        parsed.message = version.what();
        return parsed;
    } catch (const CLI::ParseError& error) {
        parsed.exit_code = 2;
        parsed.message =
            std::string("vtpage-viewer: ") + error.what() + "\nRun with --help for the flags.";
        return parsed;
    }
    o.hud = hud_flag->count() > 0 ? std::optional<bool>(hud) : std::nullopt;
    o.mode = render_modes.at(mode);
    o.texture_format = texture_formats.at(texture_format);
    o.progress = !quiet;
    o.view = o.scene.empty() ? views.at(view) : View::scene;
    if (o.headless && o.camera_path.empty()) {
        o.camera_path = o.view == View::scene   ? "orbit"
                        : o.view == View::image ? "image-tour"
                                                : "overview";
    }
    parsed.options = o;
    return parsed;
}

}  // namespace vtpage::viewer
