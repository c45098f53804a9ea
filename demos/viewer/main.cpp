// vtpage-viewer: the streaming demo. Flies over a virtual texture (a 1M x 1M procedural terrain
// by default) whose pages are streamed into GPU memory on demand and sampled by Vulkan in place;
// in a window with a HUD, or headless for CI and benchmarks. docs/viewer.md has the details.
#include <sys/resource.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "headless_loop.hpp"
#if VTPAGE_VIEWER_SCENES
#include "scene/gltf_scene.hpp"
#include "scene/scene_loading.hpp"
#endif
#include "streaming_session.hpp"
#include "viewer_options.hpp"
#include "vtpage/base/trace.hpp"
#include "window_loop.hpp"

namespace {

using namespace vtpage::viewer;

// --scene, read and baked before the run starts any thread (the reader forks).
std::shared_ptr<const SessionScene> load_scene(const ViewerOptions& options) {
    if (options.scene.empty()) return nullptr;
#if VTPAGE_VIEWER_SCENES
    try {
        const std::filesystem::path cache = options.scene_cache.empty()
                                                ? default_scene_cache()
                                                : std::filesystem::path(options.scene_cache);
        const bool progress = options.progress;
        return load_session_scene(
            options.scene, cache,
            [progress](std::string_view line) {
                if (progress) std::fprintf(stderr, "%.*s\n", int(line.size()), line.data());
            },
            options.material_stacks);
    } catch (const SceneError& error) {
        throw UsageError(error.what());
    }
#else
    throw UsageError("--scene: this viewer was built without glTF scenes (assimp and libvips)");
#endif
}

int run(const ViewerOptions& options, const vtpage::Log& log) {
    try {
        std::shared_ptr<const SessionScene> scene = load_scene(options);
        return options.headless ? run_headless(options, log, std::move(scene))
                                : run_window(options, log, std::move(scene));
    } catch (const UsageError& error) {
        std::fprintf(stderr, "vtpage-viewer: %s\n", error.what());
        return 2;
    } catch (const vtpage::Error& error) {
        std::fprintf(stderr, "vtpage-viewer: %s\n", error.what());
        if (error.code() == vtpage::Errc::not_supported && options.validation) {
            std::fprintf(stderr,
                         "vtpage-viewer: for --validation, install the Khronos validation "
                         "layer or point VK_LAYER_PATH at the folder of its "
                         "VkLayer_khronos_validation.json\n");
        }
        return 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "vtpage-viewer: %s\n", error.what());
        return 1;
    }
}

// --trace: the run's threads are gone (the session was destroyed), so the trace is complete.
int write_trace(vtpage::TraceRecorder& recorder, const std::string& path, int code) {
    recorder.uninstall();
    try {
        recorder.write_file(path);
    } catch (const vtpage::Error& error) {
        std::fprintf(stderr, "vtpage-viewer: %s\n", error.what());
        return code == 0 ? 1 : code;
    }
    const vtpage::TraceStatistics stats = recorder.statistics();
    std::fprintf(stderr, "trace: %s (%zu events kept, %llu dropped)\n", path.c_str(),
                 stats.retained,
                 static_cast<unsigned long long>(stats.dropped) +
                     static_cast<unsigned long long>(stats.dropped_threads));
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    const ParsedOptions parsed = parse_viewer_options(argc, argv);
    if (!parsed.options) {
        std::fprintf(parsed.exit_code == 0 ? stdout : stderr, "%s\n", parsed.message.c_str());
        return parsed.exit_code;
    }
    const ViewerOptions& options = *parsed.options;
    // A set of 4,096 distinct files needs a descriptor each: the soft limit (often 1024) is
    // raised to the hard one, as docs/viewer.md says.
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }
    // Warnings and errors (every validation message among them) go to stderr.
    const vtpage::Log log(vtpage::stderr_log(vtpage::LogLevel::warning));
    std::optional<vtpage::TraceRecorder> recorder;
    if (!options.trace.empty()) {
        recorder.emplace(vtpage::TraceSettings{.events_per_thread = options.trace_events});
        recorder->install();
        vtpage::trace::name_thread("viewer render");
    }
    const int code = run(options, log);
    return recorder ? write_trace(*recorder, options.trace, code) : code;
}
