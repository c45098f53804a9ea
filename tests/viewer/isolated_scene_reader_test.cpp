// The scene read in a child process: the same scene as read in-process; its errors passed on;
// a file on which assimp itself crashes, and a deadline that passes, are errors too, and the
// process that asked goes on.
#include "scene/isolated_scene_reader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "scene/scene_wire.hpp"

namespace vtpage::viewer {
namespace {

namespace fs = std::filesystem;

const fs::path models = "/usr/share/assimp/models/glTF2";
const fs::path our_scenes = fs::path(VTPAGE_TEST_SCENES);

std::string isolated_error(const fs::path& path, const IsolatedReadSettings& settings = {}) {
    try {
        read_gltf_scene_isolated(path, settings);
    } catch (const SceneError& error) {
        return error.what();
    }
    return "";
}

TEST(IsolatedSceneReaderTest, GivesTheSceneThatIsReadInProcess) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    for (const char* file :
         {"BoxTextured-glTF-Binary/BoxTextured.glb", "ClearCoat-glTF/ClearCoatTest.gltf"}) {
        const GltfScene here = load_gltf_scene(models / file);
        const GltfScene there = read_gltf_scene_isolated(models / file);
        EXPECT_EQ(encode_scene(there), encode_scene(here)) << file;
        ASSERT_EQ(there.meshes.size(), here.meshes.size());
        EXPECT_EQ(there.meshes[0].indices, here.meshes[0].indices);
        EXPECT_EQ(there.images.size(), here.images.size());
    }
}

TEST(IsolatedSceneReaderTest, PassesOnTheReasonASceneIsRefused) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    const std::string message = isolated_error(models / "RecursiveNodes/RecursiveNodes.gltf");
    EXPECT_NE(message.find("recursive reference"), std::string::npos) << message;
}

// assimp 5.2.5 dereferences null on this .glb (a fuzzed box whose primitive became a line
// loop): read here it would end the process; read in a child it is an error that says so.
TEST(IsolatedSceneReaderTest, ACrashOfTheReaderIsAnError) {
    const std::string message = isolated_error(our_scenes / "assimp_crashes_on_line_loop.glb");
    EXPECT_NE(message.find("assimp_crashes_on_line_loop.glb"), std::string::npos) << message;
    const bool crashed = message.find("crashed") != std::string::npos;
    const bool refused = message.find("not a glTF scene") != std::string::npos;  // a fixed assimp
    EXPECT_TRUE(crashed || refused) << message;
}

TEST(IsolatedSceneReaderTest, ADeadlineThatPassesKillsTheReader) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    IsolatedReadSettings settings;
    settings.deadline = std::chrono::milliseconds(0);
    const std::string message =
        isolated_error(models / "ClearCoat-glTF/ClearCoatTest.gltf", settings);
    EXPECT_NE(message.find("took longer than 0 ms"), std::string::npos) << message;
}

// Bytes that claim more than they hold, or hold what a scene may not, are refused.
TEST(IsolatedSceneReaderTest, BytesFromTheReaderAreCheckedAsUntrusted) {
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)";
    const std::vector<std::uint8_t> good =
        encode_scene(load_gltf_scene(models / "BoxTextured-glTF-Binary/BoxTextured.glb"));
    for (std::size_t cut : {std::size_t(0), std::size_t(7), good.size() / 2, good.size() - 1}) {
        EXPECT_THROW(decode_scene(std::span(good).first(cut), {}, "cut"), SceneError) << cut;
    }
    GltfScene scene = load_gltf_scene(models / "BoxTextured-glTF-Binary/BoxTextured.glb");
    scene.meshes[0].indices[0] = 1000000;
    try {
        decode_scene(encode_scene(scene), {}, "bad index");
        ADD_FAILURE() << "an index past the vertices was taken";
    } catch (const SceneError& error) {
        EXPECT_NE(std::string(error.what()).find("index 1000000"), std::string::npos)
            << error.what();
    }
    GltfSceneLimits few;
    few.max_vertices = 3;
    EXPECT_THROW(decode_scene(good, few, "few"), SceneError);
}

}  // namespace
}  // namespace vtpage::viewer
