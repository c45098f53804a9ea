// Image parity of the viewer's scene drawing: each pose of a scene drawn through vtpage (streamed,
// settled) against the same pose drawn with --reference-textures (every level of every texture
// resident in ordinary sampled images of the same formats, a VkSampler per texture with its
// address modes), both by vtpage-viewer headless on the host backend with validation on.
//
// The scenes: one of our own (tools/make_streaming_scene.py, generated once into the scratch
// folder: a floor whose texture repeats six times each way in uv and nine by KHR_texture_transform,
// a mirrored wall, a box whose texture the transform rotates and scales, a clamped pillar and an
// alpha-masked fence), its baked textures more than four times the page budget it is drawn at;
// and Debian's BoxTextured and TextureTransformTest (assimp-testmodels). The poses are frames of
// the scene camera paths: head-on, magnified, minified, grazing, rotated over mirrored and
// transformed uvs, the fence's cutout against the sky.
//
// Over the pixels the scene covers (those that are not the sky's clear colour in both images):
// PSNR at least 45 dB at every pose, since vtpage takes its level of detail from the device
// (--lod-from device, VulkanLodProbe: the gate the formula's level would have is 40 dB at the
// rotated, grazing and minified poses; the 16x poses are reported only), and the 99.99th
// percentile of the channels' absolute errors at most 8/255. Where the alpha test passes in one
// image and fails in the other (a fence texel's alpha a rounding away from the cutoff) the pixel
// is a coverage difference, not a colour error: at most 0.5 % of the fence's edge pixels may
// differ so. Each pose prints a row of the table; a failing pose keeps its images and their
// difference in the scratch folder and names them.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../bake/under_sanitizer.hpp"
#include "../bake/vips_under_thread_sanitizer.hpp"
#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"
#include "renderer/vulkan_renderer.hpp"
#include "renderer/vulkan_screenshot.hpp"
#include "viewer_process.hpp"

namespace vtpage {
namespace {

namespace fs = std::filesystem;

constexpr int frame_width = 480, frame_height = 360;
constexpr int error_gate = 8;            // the 99.99th percentile's, of 255
constexpr double masked_gate = 0.005;    // of the fence's edge pixels
constexpr std::size_t min_edges = 1000;  // fence edge pixels that make a pose's share count
constexpr std::uint32_t our_budget_mib = 48;
const fs::path models = "/usr/share/assimp/models/glTF2";
const std::vector<std::string> no_display = {"DISPLAY", "WAYLAND_DISPLAY"};

fs::path scratch() {
    const fs::path folder = fs::path(testing::TempDir()) / "vtpage_scene_parity";
    fs::create_directories(folder);
    return folder;
}

// This process's screenshots and statistics: the scene and its baked cache are shared by the
// processes that run at once (under the scene's lock), a pose's files are not (two processes
// removed each other's).
fs::path pose_files() {
    const fs::path folder = scratch() / ("poses-" + std::to_string(::getpid()));
    fs::create_directories(folder);
    return folder;
}

// Our scene, generated on first use into the scratch folder (its images kept for the next run,
// the scene written again where the generator is newer); the folder is locked while it is made,
// for test cases run at once. Empty, with the reason, where it cannot be made.
fs::path our_scene(std::string& reason) {
    if (std::string(VTPAGE_PYTHON).empty()) {
        reason = "no Python 3 interpreter was found at configure time";
        return {};
    }
    const fs::path folder = scratch() / "scene";
    const fs::path scene = folder / "scene.gltf";
    const int lock = ::open((scratch() / "scene.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
        reason = "cannot lock " + (scratch() / "scene.lock").string();
        if (lock >= 0) ::close(lock);
        return {};
    }
    std::error_code error;
    const bool current =
        fs::exists(scene) &&
        fs::last_write_time(scene, error) >= fs::last_write_time(VTPAGE_SCENE_GENERATOR, error);
    test::ProgramResult made;
    if (!current) {
        made = test::run_program(
            {VTPAGE_PYTHON, VTPAGE_SCENE_GENERATOR, folder.string(), "--bake", VTPAGE_BAKE_TOOL},
            {}, 300);
    }
    ::close(lock);
    if (!current && made.exit_code != 0) {
        ADD_FAILURE() << "the scene generator failed: " << made.output;
        reason = "no scene";
        return {};
    }
    return scene;
}

struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgba;
    const std::uint8_t* at(int x, int y) const { return &rgba[(std::size_t(y) * width + x) * 4]; }
};

Image read_png(const fs::path& path) {
    Image image;
    int channels = 0;
    stbi_uc* pixels = stbi_load(path.c_str(), &image.width, &image.height, &channels, 4);
    if (!pixels) return image;
    image.rgba.assign(pixels, pixels + std::size_t(image.width) * image.height * 4);
    stbi_image_free(pixels);
    return image;
}

nlohmann::json read_json(const fs::path& path) {
    std::ifstream file(path);
    return nlohmann::json::parse(file, nullptr, false);
}

struct Scene {
    const char* name;
    fs::path file;
    std::uint32_t budget_mib = 64;
    bool ours = false;  // the fence is keyed by its colour, the streaming checked
    // The material stacks the viewer makes of it, and the slots drawn through them.
    std::size_t stacks = 0, stacked_slots = 0;
};

// A frame of a scene camera path and what it must meet.
struct Pose {
    const char* name;
    const char* path;     // orbit or approach
    double seconds;       // the time on the path
    double gate_db;       // PSNR
    double min_coverage;  // the share of the image the scene covers, at least
    std::uint32_t anisotropy = 1;
    bool gated = true;  // false: reported only
};

// The scene's pixels compared: the colour channels of those covered in either image, except
// those whose alpha test went different ways; and those, against the fence's edge pixels.
struct Scores {
    std::size_t covered = 0;
    double coverage = 0;  // covered / all pixels
    double psnr = 0;      // infinite where the images are equal
    int p9999 = 0;        // the 99.99th percentile of the absolute channel errors, of 255
    int largest = 0;
    // The fence's edge pixels: next to a pixel that is not the fence in either image, or the
    // fence in one image only (flipped).
    std::size_t edges = 0;
    std::size_t flipped = 0;
    double flipped_share() const { return edges == 0 ? 0 : double(flipped) / double(edges); }
};

// The fence's cutout is magenta (tools/make_streaming_scene.py), which neither terrain, the sky
// nor any shading of them is: red and blue each well over twice the green.
bool fence(const std::uint8_t* p) { return p[0] > 2 * p[1] + 16 && p[2] > 2 * p[1] + 16; }

Scores compare(const Image& ours, const Image& reference, bool keyed) {
    const auto& clear = viewer::VulkanRendererSettings{}.clear_colour;
    std::uint8_t sky[3];
    for (int c = 0; c < 3; ++c) sky[c] = std::uint8_t(std::lround(clear[c] * 255));
    const auto is_sky = [&](const std::uint8_t* p) {
        return p[0] == sky[0] && p[1] == sky[1] && p[2] == sky[2];
    };
    const int w = ours.width, h = ours.height;
    const auto edge = [&](const Image& image, int x, int y) {
        if (!fence(image.at(x, y))) return false;
        const int dx[] = {1, -1, 0, 0}, dy[] = {0, 0, 1, -1};
        for (int i = 0; i < 4; ++i) {
            const int nx = x + dx[i], ny = y + dy[i];
            if (nx >= 0 && ny >= 0 && nx < w && ny < h && !fence(image.at(nx, ny))) return true;
        }
        return false;
    };
    Scores s;
    std::array<std::size_t, 256> histogram{};
    double squared = 0;
    std::size_t channels = 0;
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            const std::uint8_t *a = ours.at(x, y), *b = reference.at(x, y);
            if (is_sky(a) && is_sky(b)) continue;
            ++s.covered;
            if (keyed) {
                const bool flipped = fence(a) != fence(b);
                s.edges += flipped || edge(ours, x, y) || edge(reference, x, y);
                if (flipped) {
                    ++s.flipped;
                    continue;
                }
            }
            for (int c = 0; c < 3; ++c) {
                const int d = std::abs(int(a[c]) - int(b[c]));
                ++histogram[d];
                squared += double(d) * d;
                ++channels;
                s.largest = std::max(s.largest, d);
            }
        }
    }
    s.coverage = double(s.covered) / (double(w) * h);
    if (channels == 0) return s;
    s.psnr = squared == 0 ? std::numeric_limits<double>::infinity()
                          : 10 * std::log10(255.0 * 255.0 * double(channels) / squared);
    const auto rank = std::size_t(double(channels - 1) * 0.9999);
    std::size_t seen = 0;
    for (int d = 0; d < 256; ++d) {
        seen += histogram[d];
        if (seen > rank) {
            s.p9999 = d;
            break;
        }
    }
    return s;
}

// The difference of two images, times 8 (32/255 is white), opaque.
void write_difference(const fs::path& path, const Image& a, const Image& b) {
    std::vector<std::uint8_t> rgba(a.rgba.size());
    for (std::size_t i = 0; i < rgba.size(); ++i) {
        rgba[i] =
            i % 4 == 3 ? 255 : std::uint8_t(std::min(255, 8 * std::abs(a.rgba[i] - b.rgba[i])));
    }
    viewer::write_png(path.string(), std::uint32_t(a.width), std::uint32_t(a.height), rgba);
}

std::string file_name(std::string text) {
    std::replace_if(
        text.begin(), text.end(),
        [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    return text;
}

// One run of the viewer at a pose, through vtpage or the reference.
struct ViewerRun {
    Image image;
    nlohmann::json stats;
    fs::path shot, stats_file;
};

std::optional<ViewerRun> run_viewer(const Scene& scene, const Pose& pose, bool reference) {
    const std::string name = file_name(std::string(scene.name) + "_" + pose.name) +
                             (reference ? "_reference" : "_vtpage");
    ViewerRun run;
    run.shot = pose_files() / (name + ".png");
    run.stats_file = pose_files() / (name + ".json");
    const fs::path& stats = run.stats_file;
    // The pose of frame N - 1 at the path's time: N - 1 steps of at most 10 s (the flag's limit).
    const int frames = pose.seconds == 0 ? 1 : int(std::ceil(pose.seconds / 10)) + 1;
    const double step_ms = frames == 1 ? 16 : pose.seconds * 1000 / (frames - 1);
    std::vector<std::string> argv = {test::viewer_path(),
                                     "--backend",
                                     "host",
                                     "--headless",
                                     "--quiet",
                                     "--scene",
                                     scene.file.string(),
                                     "--scene-cache",
                                     (scratch() / "cache").string(),
                                     "--width",
                                     std::to_string(frame_width),
                                     "--height",
                                     std::to_string(frame_height),
                                     "--budget-mib",
                                     std::to_string(scene.budget_mib),
                                     "--camera-path",
                                     pose.path,
                                     "--frames",
                                     std::to_string(frames),
                                     "--time-step-ms",
                                     std::to_string(step_ms),
                                     "--anisotropy",
                                     std::to_string(pose.anisotropy),
                                     "--settle",
                                     "--screenshot",
                                     run.shot.string(),
                                     "--stats",
                                     stats.string()};
    if (test::test_validation_mode() != ValidationMode::off) argv.push_back("--validation");
    if (reference) {
        argv.push_back("--reference-textures");
    } else {
        argv.insert(argv.end(), {"--lod-from", "device"});
    }
    const test::ProgramResult result = test::run_program(argv, no_display, 300);
    if (result.exit_code != 0) {
        ADD_FAILURE() << pose.name << (reference ? " (reference)" : "")
                      << ": the viewer exited with " << result.exit_code << ": " << result.output;
        return std::nullopt;
    }
    run.stats = read_json(stats);
    run.image = read_png(run.shot);
    if (run.stats.is_discarded() || run.image.width != frame_width ||
        run.image.height != frame_height) {
        ADD_FAILURE() << pose.name << ": no statistics or screenshot of " << frame_width << " x "
                      << frame_height << " in " << stats << " and " << run.shot;
        return std::nullopt;
    }
    EXPECT_EQ(run.stats["settled"], true) << pose.name;
    EXPECT_EQ(run.stats["scene"]["stacks"], scene.stacks) << pose.name;
    EXPECT_EQ(run.stats["scene"]["stacked_slots"], scene.stacked_slots) << pose.name;
    EXPECT_EQ(run.stats["validation_messages"], 0) << pose.name << ": " << result.output;
    if (!reference) {
        EXPECT_EQ(run.stats["scene"]["lod_from"], "device") << pose.name;
    }
    if (test::test_validation_mode() == ValidationMode::required) {
        EXPECT_EQ(run.stats["validation"], true) << pose.name;
    }
    return run;
}

std::uint64_t texture_pages(const nlohmann::json& stats) {
    std::uint64_t pages = 0;
    for (const nlohmann::json& texture : stats["textures"])
        pages += texture["pages"].get<std::uint64_t>();
    return pages;
}

// Our scene streams: its textures hold at least 4 times the pages of the budget, the run stayed
// within the budget, committed pages of fine levels of its own (beyond the packed tails and
// coarse levels) and ended holding fewer pages than the textures have, or evicted some.
void expect_streamed(const Pose& pose, const nlohmann::json& stats) {
    SCOPED_TRACE(pose.name);
    const std::uint64_t budget = stats["budget_pages"], pages = texture_pages(stats);
    const std::uint64_t resident = stats["resident_pages"], evicted = stats["pages_evicted"];
    const std::uint64_t committed = stats["pages_committed"];
    const std::uint64_t shared =
        stats["tail_pages"].get<std::uint64_t>() + stats["level_pages"].get<std::uint64_t>();
    EXPECT_GE(pages, 4 * budget);
    EXPECT_LE(resident, budget);
    EXPECT_GT(committed, shared) << "pages of fine levels were streamed";
    EXPECT_TRUE(evicted > 0 || resident < pages) << resident << " of " << pages << " resident";
}

// The vtpage run counted its settled image's fragments and their levels (printed in the table),
// and the reference none. Where every page of every texture is resident and the sampling is
// isotropic, no fragment can have fallen back to a coarser level: each samples the level it
// wants. Elsewhere (our scene at a quarter-size budget, 16x) the share is reported only.
double expect_quality_counted(const Pose& pose, const nlohmann::json& ours,
                              const nlohmann::json& reference) {
    SCOPED_TRACE(pose.name);
    const nlohmann::json& quality = ours["quality"];
    EXPECT_EQ(reference["quality"]["measured"], false) << reference["quality"];
    if (quality["measured"] != true) {
        ADD_FAILURE() << "the colour pass counted nothing: " << quality;
        return 0;
    }
    EXPECT_GT(quality["counted_last"].get<std::uint64_t>(), 0u) << quality;
    const double last = quality["share_at_wanted_level"]["last"].get<double>();
    EXPECT_GT(last, 0.0) << quality;
    EXPECT_LE(last, 1.0) << quality;
    bool all_resident = true;
    for (const nlohmann::json& texture : ours["textures"])
        all_resident = all_resident && texture["resident_pages"] == texture["pages"];
    if (all_resident && pose.anisotropy == 1) {
        EXPECT_EQ(last, 1.0) << quality;
    }
    return last;
}

class SceneParityTest : public testing::Test {
protected:
    void SetUp() override {
#ifndef VTPAGE_VIEWER_SCENES
        GTEST_SKIP() << "vtpage-viewer was built without --scene (it needs assimp and libvips)";
#endif
#ifdef VTPAGE_UNDER_SANITIZER
        GTEST_SKIP() << "scene parity compares pictures and runs in the normal build: under a "
                        "sanitizer its viewer runs take over 10 min";
#endif
        VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER();  // the viewer bakes the scenes' images
        VTPAGE_BACKEND_OR_SKIP(backend, "host");
        VTPAGE_VULKAN_OR_SKIP(context, *backend);
        if (!context->supports_texture_compression_bc()) {
            GTEST_SKIP() << context->device_name()
                         << " offers no textureCompressionBC: --reference-textures needs it";
        }
    }

    // Every pose of the scene through vtpage and the reference: a row of the table each, the
    // gates checked, the images of a failing pose kept.
    void check_poses(const Scene& scene, const std::vector<Pose>& poses) {
        std::printf(
            "scene parity, %s: vtpage (%u MiB budget) against --reference-textures, %d x "
            "%d pixels\n",
            scene.name, scene.budget_mib, frame_width, frame_height);
        std::printf("  %-28s %-8s %5s %5s %8s %5s %8s %7s %4s %16s %23s %7s %4s\n", "pose", "path",
                    "t (s)", "aniso", "covered", "gate", "PSNR", "p99.99", "max", "masked edges",
                    "pages: resident/budget", "wanted", "pass");
        std::string device;
        std::size_t all_edges = 0, all_flipped = 0;
        for (const Pose& pose : poses) {
            SCOPED_TRACE(pose.name);
            const std::optional<ViewerRun> ours = run_viewer(scene, pose, false);
            const std::optional<ViewerRun> reference = run_viewer(scene, pose, true);
            if (!ours || !reference) continue;
            device = ours->stats["device"].get<std::string>();
            const Scores s = compare(ours->image, reference->image, scene.ours);
            const bool masked = scene.ours && s.edges >= min_edges;
            const bool passes = s.coverage >= pose.min_coverage && s.psnr >= pose.gate_db &&
                                s.p9999 <= error_gate &&
                                (!masked || s.flipped_share() <= masked_gate);
            char edges[32] = "-";
            if (scene.ours) {
                std::snprintf(edges, sizeof edges, "%zu/%zu %.2f%%", s.flipped, s.edges,
                              100 * s.flipped_share());
            }
            all_edges += s.edges;
            all_flipped += s.flipped;
            char pages[48];
            std::snprintf(pages, sizeof pages, "%llu/%llu of %llu",
                          static_cast<unsigned long long>(ours->stats["resident_pages"]),
                          static_cast<unsigned long long>(ours->stats["budget_pages"]),
                          static_cast<unsigned long long>(texture_pages(ours->stats)));
            const double at_wanted = expect_quality_counted(pose, ours->stats, reference->stats);
            char row[256];
            std::snprintf(
                row, sizeof row,
                "%-28s %-8s %5.1f %5u %7.1f%% %5.0f %8.2f %3d/255 %4d %16s %23s %6.1f%% %4s",
                pose.name, pose.path, pose.seconds, pose.anisotropy, 100 * s.coverage, pose.gate_db,
                s.psnr, s.p9999, s.largest, edges, pages, 100 * at_wanted,
                passes ? "yes" : (pose.gated ? "NO" : "(no)"));
            std::printf("  %s\n", row);
            std::fflush(stdout);
            RecordProperty(file_name(std::string(scene.name) + "_" + pose.name), row);
            if (scene.ours) expect_streamed(pose, ours->stats);
            if (!passes && pose.gated) {
                EXPECT_GE(s.coverage, pose.min_coverage) << "the scene covers too little";
                EXPECT_GE(s.psnr, pose.gate_db);
                EXPECT_LE(s.p9999, error_gate) << s.p9999 << "/255";
                if (masked) {
                    EXPECT_LE(s.flipped_share(), masked_gate);
                }
                const fs::path difference =
                    pose_files() /
                    (file_name(std::string(scene.name) + "_" + pose.name) + "_difference.png");
                write_difference(difference, ours->image, reference->image);
                ADD_FAILURE() << "kept: " << ours->shot.string() << ", " << reference->shot.string()
                              << " and (times 8) " << difference.string();
            } else {
                std::error_code ignored;
                for (const ViewerRun* run : {&*ours, &*reference}) {
                    fs::remove(run->shot, ignored);
                    fs::remove(run->stats_file, ignored);
                }
            }
        }
        std::printf("  (on %s; PSNR and p99.99 over the covered pixels whose alpha test agrees)\n",
                    device.c_str());
        std::error_code ignored;
        fs::remove(pose_files(), ignored);  // only where empty: failing poses keep their files
        if (!scene.ours) return;
        // Each pose's share counts where the fence has edges enough; all the poses' together
        // count always.
        const Scores all{.edges = all_edges, .flipped = all_flipped};
        std::printf("  masked edges over all poses: %zu of %zu differ, %.2f%%\n", all_flipped,
                    all_edges, 100 * all.flipped_share());
        RecordProperty(file_name(std::string(scene.name) + "_masked_edges"),
                       std::to_string(all_flipped) + "/" + std::to_string(all_edges));
        EXPECT_GE(all_edges, min_edges);
        EXPECT_LE(all.flipped_share(), masked_gate);
    }
};

// Our scene at 48 MiB (24 pages) against its 298 MiB of baked textures and its material stack:
// each pose settles on the pages it asks for, and matches the reference. The box's base colour,
// metallic-roughness and occlusion (one size, sampler and transform) are drawn as one stack of
// three layers; the wall's base colour and occlusion (another size) are not: 1 stack, 3 slots.
TEST_F(SceneParityTest, OurSceneStreamedAtAQuarterOfItsTexturesMatchesTheReferenceAtEveryPose) {
    std::string reason;
    const fs::path file = our_scene(reason);
    if (file.empty()) GTEST_SKIP() << reason;
    const Scene scene{"streaming scene", file, our_budget_mib, true, 1, 3};
    check_poses(scene, {
                           {"head-on: mirrored wall", "orbit", 21.7, 45, 0.08},
                           {"magnified: transformed box", "approach", 8, 45, 0.4},
                           {"minified: from high up", "orbit", 0, 45, 0.08},
                           {"grazing: low orbit", "orbit", 6.7, 45, 0.08},
                           {"rotated: box and mirror", "approach", 4, 45, 0.4},
                           {"alpha-masked fence", "approach", 11, 45, 0.4},
                       });
}

TEST_F(SceneParityTest, BoxTexturedMatchesTheReference) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    const Scene scene{"BoxTextured", models / "BoxTextured-glTF/BoxTextured.gltf"};
    check_poses(scene, {
                           {"orbit", "orbit", 0, 45, 0.1},
                           {"magnified", "approach", 8, 45, 0.3},
                       });
}

TEST_F(SceneParityTest, TextureTransformTestMatchesTheReference) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    const Scene scene{"TextureTransformTest",
                      models / "textureTransform/TextureTransformTest.gltf"};
    check_poses(scene, {
                           {"orbit", "orbit", 0, 45, 0.1},
                           {"magnified", "approach", 8, 45, 0.3},
                       });
}

// --anisotropy 16 in both: vtpage's probes along the footprint against the device's anisotropic
// sampler, reported and not gated. lavapipe's is not a reference here: on this model it draws
// dotted seams along the triangles' diagonals and edges that vtpage's image does not have (26 to
// 29 dB here, 31 to 34 on BoxTextured; Mesa 22.3), and on our scene it never finishes a frame at
// any anisotropy above 1 (its rasterizer thread spins in the sampling code), so our scene is left
// out of this case.
TEST_F(SceneParityTest, AtSixteenTimesAnisotropyTheModelsAreReportedAgainstTheReference) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    check_poses({"TextureTransformTest", models / "textureTransform/TextureTransformTest.gltf"},
                {{"16x low orbit", "orbit", 6.7, 40, 0.1, 16, false},
                 {"16x magnified", "approach", 8, 45, 0.3, 16, false}});
}

}  // namespace
}  // namespace vtpage
