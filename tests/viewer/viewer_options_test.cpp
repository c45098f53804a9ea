// The viewer's command line: defaults, every flag reaching its option, and bad flags refused
// with exit status 2 and a message that says what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "viewer_options.hpp"

namespace vtpage::viewer {
namespace {

ParsedOptions parse(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), "vtpage-viewer");
    std::vector<const char*> argv;
    for (const std::string& argument : arguments) argv.push_back(argument.c_str());
    return parse_viewer_options(int(argv.size()), argv.data());
}

TEST(ViewerOptionsTest, DefaultsFlyAWindowOverTheMillionTexelTexture) {
    const ParsedOptions parsed = parse({});
    ASSERT_TRUE(parsed.options) << parsed.message;
    const ViewerOptions& o = *parsed.options;
    EXPECT_FALSE(o.headless);
    EXPECT_EQ(o.backend, "auto");
    EXPECT_EQ(o.texture, "procedural");
    EXPECT_EQ(o.texture_size_log2, 20u);
    EXPECT_EQ(o.texture_format, vt::TileFormat::rgba8);
    EXPECT_EQ(o.budget_mib, 1024u);
    EXPECT_EQ(o.frames, 0u);
    EXPECT_TRUE(o.camera_path.empty()) << "the mouse and keyboard fly a window";
    EXPECT_FALSE(o.hud.has_value());
    EXPECT_EQ(o.anisotropy, 1u) << "trilinear";
    EXPECT_FALSE(o.validation);
}

TEST(ViewerOptionsTest, EveryFlagReachesItsOption) {
    const ParsedOptions parsed = parse({"--backend",
                                        "host",
                                        "--texture-size-log2",
                                        "12",
                                        "--seed",
                                        "9",
                                        "--texture-format",
                                        "bc1",
                                        "--budget-mib",
                                        "64",
                                        "--width",
                                        "320",
                                        "--height",
                                        "200",
                                        "--headless",
                                        "--frames",
                                        "42",
                                        "--camera-path",
                                        "dive",
                                        "--time-step-ms",
                                        "50",
                                        "--screenshot",
                                        "shot.png",
                                        "--stats",
                                        "stats.json",
                                        "--validation",
                                        "--workers",
                                        "3",
                                        "--batch-pages",
                                        "8",
                                        "--no-vsync",
                                        "--hud",
                                        "--mode",
                                        "residency",
                                        "--feedback-divisor",
                                        "2",
                                        "--anisotropy",
                                        "16",
                                        "--settle",
                                        "--preload-all",
                                        "--warmup-frames",
                                        "5",
                                        "--read-backend",
                                        "threads",
                                        "--quiet"});
    ASSERT_TRUE(parsed.options) << parsed.message;
    const ViewerOptions& o = *parsed.options;
    EXPECT_EQ(o.backend, "host");
    EXPECT_EQ(o.texture_size_log2, 12u);
    EXPECT_EQ(o.seed, 9u);
    EXPECT_EQ(o.texture_format, vt::TileFormat::bc1);
    EXPECT_EQ(o.budget_mib, 64u);
    EXPECT_EQ(o.width, 320u);
    EXPECT_EQ(o.height, 200u);
    EXPECT_TRUE(o.headless);
    EXPECT_EQ(o.frames, 42u);
    EXPECT_EQ(o.camera_path, "dive");
    EXPECT_DOUBLE_EQ(o.time_step_ms, 50.0);
    EXPECT_EQ(o.screenshot, "shot.png");
    EXPECT_EQ(o.stats, "stats.json");
    EXPECT_TRUE(o.validation);
    EXPECT_EQ(o.workers, 3u);
    EXPECT_EQ(o.batch_pages, 8u);
    EXPECT_FALSE(o.vsync);
    EXPECT_EQ(o.hud, std::optional<bool>(true));
    EXPECT_EQ(o.mode, RenderMode::residency);
    EXPECT_EQ(o.feedback_divisor, 2u);
    EXPECT_EQ(o.anisotropy, 16u);
    EXPECT_TRUE(o.settle);
    EXPECT_TRUE(o.preload_all);
    EXPECT_EQ(o.warmup_frames, 5u);
    EXPECT_EQ(o.read_backend, "threads");
    EXPECT_FALSE(o.progress);
}

TEST(ViewerOptionsTest, HeadlessFliesTheOverviewUnlessTold) {
    const ParsedOptions parsed = parse({"--headless"});
    ASSERT_TRUE(parsed.options);
    EXPECT_EQ(parsed.options->camera_path, "overview");
    EXPECT_EQ(parse({"--headless", "--no-hud"}).options->hud, std::optional<bool>(false));
}

TEST(ViewerOptionsTest, TheImageViewTakesItsOwnPaths) {
    EXPECT_EQ(parse({}).options->view, View::plane);
    const ParsedOptions image = parse({"--headless", "--view", "image"});
    ASSERT_TRUE(image.options) << image.message;
    EXPECT_EQ(image.options->view, View::image);
    EXPECT_EQ(image.options->camera_path, "image-tour");
    EXPECT_TRUE(parse({"--view", "plane", "--camera-path", "dive"}).options);
    EXPECT_TRUE(parse({"--view", "image", "--camera-path", "image-tour"}).options);
}

TEST(ViewerOptionsTest, HelpExitsZeroWithTheFlags) {
    const ParsedOptions parsed = parse({"--help"});
    EXPECT_FALSE(parsed.options);
    EXPECT_EQ(parsed.exit_code, 0);
    for (const char* flag :
         {"--backend", "--texture", "--texture-format", "--budget-mib", "--headless", "--frames",
          "--camera-path", "--view", "--screenshot", "--stats", "--validation"}) {
        EXPECT_NE(parsed.message.find(flag), std::string::npos) << flag;
    }
}

// Where a flag's own line of the help is ("  --flag" at a line's start); npos when absent.
std::size_t help_line(const std::string& help, const std::string& flag) {
    return help.find("\n  " + flag);
}

TEST(ViewerOptionsTest, HelpListsTheFlagsInGroups) {
    const ParsedOptions parsed = parse({"--help"});
    ASSERT_EQ(parsed.exit_code, 0);
    const std::string& help = parsed.message;
    // Each group's heading, in the order shown, with flags listed under it.
    const std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
        {"Scene",
         {"--texture TEXT", "--texture-format", "--seed", "--view", "--mode", "--anisotropy"}},
        {"Budget and pressure", {"--budget-mib", "--governor", "--pressure-mib"}},
        {"Window and image", {"--width", "--height", "--vsync,--no-vsync", "--hud,--no-hud"}},
        {"Headless run", {"--headless", "--frames", "--camera-path", "--settle", "--quiet"}},
        {"Checks and output",
         {"--screenshot", "--stats", "--trace", "--trace-events", "--validation",
          "--identity-check"}},
        {"Streaming", {"--backend", "--workers", "--no-pack-tails", "--preload-all"}},
        {"Feedback", {"--feedback-divisor", "--feedback-on-render-thread"}},
    };
    std::size_t previous = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::size_t heading = help.find("\n" + groups[g].first + ":\n");
        ASSERT_NE(heading, std::string::npos) << groups[g].first << "\n" << help;
        EXPECT_GT(heading, previous) << groups[g].first << " is out of order";
        const std::size_t next = g + 1 < groups.size()
                                     ? help.find("\n" + groups[g + 1].first + ":\n")
                                     : std::string::npos;
        for (const std::string& flag : groups[g].second) {
            const std::size_t at = help_line(help, flag);
            EXPECT_GT(at, heading) << flag << " is not under " << groups[g].first;
            EXPECT_LT(at, next) << flag << " is not under " << groups[g].first;
        }
        previous = heading;
    }
    // Nothing is left in CLI11's catch-all group but the help and version flags.
    const std::size_t options = help.find("\nOptions:\n");
    ASSERT_NE(options, std::string::npos) << help;
    EXPECT_LT(options, help.find("\nScene:\n"));
    EXPECT_NE(help_line(help, "-h,--help"), std::string::npos);
    EXPECT_LT(help_line(help, "--version"), help.find("\nScene:\n"));
    const std::string catch_all = help.substr(options, help.find("\nScene:\n") - options);
    std::size_t flags = 0;
    for (std::size_t at = catch_all.find("\n  -"); at != std::string::npos;
         at = catch_all.find("\n  -", at + 1)) {
        ++flags;
    }
    EXPECT_EQ(flags, 2u) << catch_all;
}

TEST(ViewerOptionsTest, GroupedFlagsStillParse) {
    const ParsedOptions parsed =
        parse({"--headless", "--no-hud", "--no-vsync", "--forward-texturing",
               "--feedback-on-render-thread", "--no-pack-tails", "--no-pack-levels"});
    ASSERT_TRUE(parsed.options) << parsed.message;
    const ViewerOptions& o = *parsed.options;
    EXPECT_EQ(o.hud, std::optional<bool>(false));
    EXPECT_FALSE(o.vsync);
    EXPECT_FALSE(o.deferred_texturing);
    EXPECT_FALSE(o.feedback_thread);
    EXPECT_FALSE(o.pack_tails);
    EXPECT_FALSE(o.pack_levels);
}

TEST(ViewerOptionsTest, TextureFormatIsForTheProceduralTexture) {
    for (const vt::TileFormat format : {vt::TileFormat::bc1, vt::TileFormat::bc3}) {
        const ParsedOptions parsed =
            parse({"--texture", "procedural", "--texture-format", vt::tile_format_name(format)});
        ASSERT_TRUE(parsed.options) << parsed.message;
        EXPECT_EQ(parsed.options->texture_format, format);
    }
    // A baked file has its format in its header: the flag with one is a mistake.
    const std::string file = testing::TempDir() + "viewer_options_texture.vtex";
    std::ofstream(file) << "a file";
    const ParsedOptions baked = parse({"--texture", file, "--texture-format", "bc1"});
    EXPECT_FALSE(baked.options);
    EXPECT_EQ(baked.exit_code, 2);
    EXPECT_NE(baked.message.find("--texture-format"), std::string::npos) << baked.message;
    EXPECT_NE(baked.message.find("procedural"), std::string::npos) << baked.message;
    ASSERT_TRUE(parse({"--texture", file}).options);  // without the flag the file is taken
    std::filesystem::remove(file);
}

// A texture set is a folder or a manifest; the set itself is opened by the session.
TEST(ViewerOptionsTest, TheTextureMayBeAFolderOrAManifest) {
    const ParsedOptions folder = parse({"--texture", testing::TempDir()});
    ASSERT_TRUE(folder.options) << folder.message;
    EXPECT_EQ(folder.options->texture, testing::TempDir());
    const std::string manifest = testing::TempDir() + "viewer_options_set.json";
    std::ofstream(manifest) << R"({"textures": [{"procedural": {"size_log2": 10}}]})";
    ASSERT_TRUE(parse({"--texture", manifest}).options);
    const ParsedOptions checked = parse({"--texture", manifest, "--identity-check"});
    EXPECT_EQ(checked.exit_code, 2) << "the identity check takes the identity texture alone";
    std::filesystem::remove(manifest);
    const ParsedOptions missing = parse({"--texture", manifest});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.message.find("no such file or folder"), std::string::npos) << missing.message;
}

TEST(ViewerOptionsTest, TheGovernorAndThePressureBenchmarkTakeTheirFlags) {
    const ParsedOptions off = parse({});
    ASSERT_TRUE(off.options);
    EXPECT_FALSE(off.options->governor);
    EXPECT_TRUE(off.options->feedback_thread);
    EXPECT_FALSE(off.options->pressure());
    const ParsedOptions on = parse(
        {"--headless", "--governor", "--headroom-mib", "2048", "--min-budget-mib", "128",
         "--frame-ms-target", "6.5", "--pressure-leave-free-mib", "256", "--pressure-at", "1.5",
         "--pressure-for", "3", "--pressure-tool", "tool", "--feedback-on-render-thread"});
    ASSERT_TRUE(on.options) << on.message;
    const ViewerOptions& o = *on.options;
    EXPECT_TRUE(o.governor);
    EXPECT_EQ(o.headroom_mib, 2048u);
    EXPECT_EQ(o.min_budget_mib, 128u);
    EXPECT_DOUBLE_EQ(o.frame_ms_target, 6.5);
    EXPECT_TRUE(o.pressure());
    EXPECT_EQ(o.pressure_mib, 0u);
    EXPECT_EQ(o.pressure_leave_free_mib, 256u);
    EXPECT_DOUBLE_EQ(o.pressure_at, 1.5);
    EXPECT_DOUBLE_EQ(o.pressure_for, 3.0);
    EXPECT_EQ(o.pressure_tool, "tool");
    EXPECT_FALSE(o.feedback_thread);
    // The default floor is above a small budget: the session holds it to the budget.
    EXPECT_TRUE(parse({"--governor", "--budget-mib", "16"}).options);
}

TEST(ViewerOptionsTest, TheUploadBudgetIsOffUnlessGiven) {
    EXPECT_EQ(parse({}).options->upload_pages_per_frame, 0u);
    const ParsedOptions given = parse({"--upload-pages-per-frame", "4", "--governor"});
    ASSERT_TRUE(given.options) << given.message;
    EXPECT_EQ(given.options->upload_pages_per_frame, 4u);
    EXPECT_TRUE(given.options->governor) << "the two limits combine";
    const ParsedOptions zero = parse({"--upload-pages-per-frame", "0"});
    ASSERT_TRUE(zero.options) << zero.message;
    EXPECT_EQ(zero.options->upload_pages_per_frame, 0u);
}

TEST(ViewerOptionsTest, TheIdentityCheckStreamsTheIdentityTexture) {
    const ParsedOptions checked = parse({"--identity-check", "--texture-size-log2", "12"});
    ASSERT_TRUE(checked.options) << checked.message;
    EXPECT_TRUE(checked.options->identity_check);
    EXPECT_EQ(checked.options->texture, "identity");
    EXPECT_EQ(checked.options->texture_size_log2, 12u);
    const ParsedOptions named = parse({"--identity-check", "--texture", "identity"});
    ASSERT_TRUE(named.options) << named.message;
    EXPECT_EQ(named.options->texture, "identity");
    // The identity texture can be looked at without the check.
    const ParsedOptions shown = parse({"--texture", "identity"});
    ASSERT_TRUE(shown.options) << shown.message;
    EXPECT_FALSE(shown.options->identity_check);
    EXPECT_FALSE(parse({}).options->identity_check);
}

struct BadFlags {
    std::vector<std::string> arguments;
    std::string says;  // part of the message
};

// --scene: a glTF file drawn as its own view, flown round by the scene's paths.
class ViewerSceneOptionsTest : public testing::Test {
protected:
    void SetUp() override {
        for (const std::string* file : {&gltf_, &glb_, &obj_}) std::ofstream(*file) << "{}";
    }
    void TearDown() override {
        for (const std::string* file : {&gltf_, &glb_, &obj_}) std::filesystem::remove(*file);
    }
    // CTest runs each test in its own process, several at once: each test has its own files,
    // or one test's TearDown removes another's while it parses.
    static std::string scene_file(const char* extension) {
        return testing::TempDir() + "viewer_options_" +
               testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
               std::to_string(::getpid()) + extension;
    }
    const std::string gltf_ = scene_file(".gltf");
    const std::string glb_ = scene_file(".glb");
    const std::string obj_ = scene_file(".obj");
};

TEST_F(ViewerSceneOptionsTest, ASceneIsItsOwnViewAndOrbitsByDefault) {
    const ParsedOptions headless =
        parse({"--headless", "--scene", gltf_, "--scene-cache", "baked scenes"});
    ASSERT_TRUE(headless.options) << headless.message;
    EXPECT_EQ(headless.options->view, View::scene);
    EXPECT_EQ(headless.options->scene, gltf_);
    EXPECT_EQ(headless.options->scene_cache, "baked scenes");
    EXPECT_EQ(headless.options->camera_path, "orbit");
    const ParsedOptions window = parse({"--scene", glb_});
    ASSERT_TRUE(window.options) << window.message;
    EXPECT_EQ(window.options->view, View::scene);
    EXPECT_TRUE(window.options->scene_cache.empty()) << "the default cache";
    const ParsedOptions approach =
        parse({"--headless", "--scene", glb_, "--camera-path", "approach"});
    ASSERT_TRUE(approach.options) << approach.message;
    EXPECT_EQ(approach.options->camera_path, "approach");
    EXPECT_EQ(parse({"--headless"}).options->view, View::plane) << "no scene, no scene view";
}

// --material-stacks: on by default, off to compare; for a scene alone; on or off only.
TEST_F(ViewerSceneOptionsTest, MaterialStacksAreOnByDefaultAndForAScene) {
    const ParsedOptions on = parse({"--headless", "--scene", gltf_});
    ASSERT_TRUE(on.options) << on.message;
    EXPECT_TRUE(on.options->material_stacks);
    const ParsedOptions off = parse({"--headless", "--scene", gltf_, "--material-stacks", "off"});
    ASSERT_TRUE(off.options) << off.message;
    EXPECT_FALSE(off.options->material_stacks);
    for (const std::vector<std::string>& arguments :
         {std::vector<std::string>{"--headless", "--material-stacks", "off"},
          std::vector<std::string>{"--headless", "--scene", gltf_, "--material-stacks", "maybe"}}) {
        const ParsedOptions refused = parse(arguments);
        EXPECT_FALSE(refused.options);
        EXPECT_EQ(refused.exit_code, 2);
        EXPECT_NE(refused.message.find("--material-stacks"), std::string::npos) << refused.message;
    }
}

// The scene's paths are for a scene alone, and a scene takes no path of the plane's.
TEST_F(ViewerSceneOptionsTest, TheScenesPathsAreForASceneAlone) {
    for (const std::vector<std::string>& arguments :
         {std::vector<std::string>{"--headless", "--camera-path", "approach"},
          std::vector<std::string>{"--camera-path", "orbit"}}) {
        const ParsedOptions parsed = parse(arguments);
        EXPECT_FALSE(parsed.options);
        EXPECT_EQ(parsed.exit_code, 2);
        EXPECT_NE(parsed.message.find("is not a path of --view plane"), std::string::npos)
            << parsed.message;
    }
    const ParsedOptions image = parse({"--view", "image", "--camera-path", "approach"});
    EXPECT_EQ(image.exit_code, 2);
    EXPECT_NE(image.message.find("'approach' is not a path of --view image"), std::string::npos)
        << image.message;
    const ParsedOptions dive = parse({"--scene", gltf_, "--camera-path", "dive"});
    EXPECT_EQ(dive.exit_code, 2);
    EXPECT_NE(
        dive.message.find("'dive' is not a path of --view scene (orbit, approach, flythrough)"),
        std::string::npos)
        << dive.message;
}

TEST_F(ViewerSceneOptionsTest, WhatASceneCannotBeDrawnWithIsRefusedSayingWhy) {
    const std::string missing = testing::TempDir() + "viewer_options_no_such_scene.glb";
    const std::vector<BadFlags> cases = {
        {{"--scene", gltf_, "--texture", "procedural"},
         "--scene: draws the scene's own images: leave --texture out"},
        {{"--scene", gltf_, "--view", "image"}, "--scene: is its own view: leave --view out"},
        {{"--scene", gltf_, "--identity-check"}, "--scene: cannot be checked by --identity-check"},
        {{"--scene", obj_}, "--scene: '" + obj_ + "' is not a .gltf or .glb file"},
        {{"--scene", missing}, "--scene: no such file: " + missing},
    };
    for (const BadFlags& c : cases) {
        const ParsedOptions parsed = parse(c.arguments);
        EXPECT_FALSE(parsed.options) << c.says;
        EXPECT_EQ(parsed.exit_code, 2) << c.says;
        EXPECT_NE(parsed.message.find(c.says), std::string::npos) << parsed.message;
    }
}

class ViewerBadFlagsTest : public testing::TestWithParam<BadFlags> {};

TEST_P(ViewerBadFlagsTest, ExitWithTwoAndSayWhy) {
    const ParsedOptions parsed = parse(GetParam().arguments);
    EXPECT_FALSE(parsed.options);
    EXPECT_EQ(parsed.exit_code, 2);
    EXPECT_NE(parsed.message.find(GetParam().says), std::string::npos) << parsed.message;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, ViewerBadFlagsTest,
    testing::Values(
        BadFlags{{"--camera-path", "sideways"}, "unknown camera path 'sideways' (overview, dive"},
        BadFlags{{"--backend", "opengl"}, "--backend"}, BadFlags{{"--width", "0"}, "--width"},
        BadFlags{{"--height", "100000"}, "--height"},
        BadFlags{{"--budget-mib", "1"}, "--budget-mib"},
        BadFlags{{"--texture", "/nonexistent/terrain.vtex"}, "no such file"},
        BadFlags{{"--texture-size-log2", "21"}, "--texture-size-log2"},
        BadFlags{{"--texture-format", "bc4"}, "unknown texture format 'bc4' (rgba8, bc1, bc3)"},
        BadFlags{{"--texture-format", "RGBA8"}, "unknown texture format 'RGBA8'"},
        BadFlags{{"--mode", "wireframe"}, "--mode"},
        BadFlags{{"--view", "globe"}, "unknown view 'globe' (plane, image)"},
        BadFlags{{"--view", "image", "--camera-path", "dive"},
                 "'dive' is not a path of --view image (image-tour)"},
        BadFlags{{"--camera-path", "image-tour"}, "'image-tour' is not a path of --view plane"},
        BadFlags{{"--frames", "-3"}, "--frames"}, BadFlags{{"--settle"}, "needs --headless"},
        BadFlags{{"--screenshot", "/nonexistent/folder/shot.png"}, "does not exist"},
        BadFlags{{"--stats", "/nonexistent/folder/stats.json"}, "does not exist"},
        BadFlags{{"--workers", "0"}, "--workers"},
        BadFlags{{"--read-backend", "aio"},
                 "--read-backend: aio not in {automatic,io_uring,threads}"},
        // Values that ran forever or wrapped around before the rule for numeric flags.
        BadFlags{{"--time-step-ms", "nan"}, "--time-step-ms: 'nan' is not a finite number"},
        BadFlags{{"--time-step-ms", "1e-300"}, "--time-step-ms: 1e-300 is not"},
        BadFlags{{"--time-step-ms", "inf"}, "--time-step-ms"},
        BadFlags{{"--warmup-frames", "-1"}, "--warmup-frames: '-1' is not a whole number"},
        BadFlags{{"--seed", "-1"}, "--seed"}, BadFlags{{"--width", "-16"}, "--width"},
        BadFlags{{"--frobnicate"}, "frobnicate"}, BadFlags{{"--width"}, "--width"},
        // The check reads the identity texture at the deferred pass's positions.
        BadFlags{{"--identity-check", "--texture", "procedural"},
                 "--identity-check: checks the identity texture"},
        BadFlags{{"--identity-check", "--forward-texturing"}, "needs deferred texturing"},
        BadFlags{{"--identity-check", "--mode", "mips"}, "checks textured frames, not --mode mips"},
        BadFlags{{"--texture", "identity", "--texture-format", "bc1"}, "--texture-format"},
        // The governor and the pressure benchmark.
        BadFlags{{"--frame-ms-target", "nan"}, "--frame-ms-target"},
        BadFlags{{"--frame-ms-target", "-1"}, "--frame-ms-target"},
        BadFlags{{"--headroom-mib", "0"}, "--headroom-mib"},
        BadFlags{{"--budget-mib", "64", "--min-budget-mib", "128"}, "is above --budget-mib"},
        BadFlags{{"--pressure-mib", "512"}, "needs --headless"},
        BadFlags{{"--headless", "--pressure-mib", "512", "--pressure-leave-free-mib", "256"},
                 "excludes"},
        BadFlags{{"--headless", "--pressure-mib", "1e99"}, "--pressure-mib"},
        BadFlags{{"--headless", "--pressure-mib", "8", "--pressure-at", "inf"}, "--pressure-at"},
        // The per-frame upload budget.
        BadFlags{{"--upload-pages-per-frame", "-1"}, "--upload-pages-per-frame: '-1'"},
        BadFlags{{"--upload-pages-per-frame", "1e99"}, "--upload-pages-per-frame"},
        BadFlags{{"--upload-pages-per-frame", "99999999999999999999"}, "--upload-pages-per-frame"},
        BadFlags{{"--upload-pages-per-frame", "2000000"}, "--upload-pages-per-frame"},
        BadFlags{{"--upload-pages-per-frame", "four"}, "--upload-pages-per-frame"},
        BadFlags{{"--upload-pages-per-frame", "nan"}, "--upload-pages-per-frame"},
        BadFlags{{"--upload-pages-per-frame"}, "--upload-pages-per-frame"},
        // Anisotropic filtering: 1 to 16 probes, in plain digits.
        BadFlags{{"--anisotropy", "0"}, "--anisotropy"},
        BadFlags{{"--anisotropy", "17"}, "--anisotropy"},
        BadFlags{{"--anisotropy", "2.5"}, "--anisotropy: '2.5' is not a whole number"},
        BadFlags{{"--anisotropy", "nan"}, "--anisotropy"},
        BadFlags{{"--anisotropy", "-4"}, "--anisotropy"},
        BadFlags{{"--anisotropy"}, "--anisotropy"}));

}  // namespace
}  // namespace vtpage::viewer
