// The viewer's glTF scene loader on scenes that no one here made (Debian's assimp-testmodels:
// the textured box in its three forms, texture transforms, normal maps, and the malformed ones),
// and on small scenes of our own for wrap modes and hostile references.
#include "scene/gltf_scene.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "../support/temporary_folder.hpp"

namespace vtpage::viewer {
namespace {

namespace fs = std::filesystem;

const fs::path models = "/usr/share/assimp/models/glTF2";

#define SKIP_WITHOUT_MODELS() \
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)"

std::string load_error(const fs::path& path, const GltfSceneLimits& limits = {}) {
    try {
        load_gltf_scene(path, limits);
    } catch (const SceneError& error) {
        return error.what();
    }
    return "";
}

// The textured box as .gltf with a .bin and a PNG beside it, as .glb and with everything
// embedded: one mesh of 12 triangles drawn once, its base colour an sRGB texture; the
// geometry is the same in all three.
TEST(GltfSceneTest, TheTexturedBoxIsTheSameInEachOfItsForms) {
    SKIP_WITHOUT_MODELS();
    const GltfScene separate = load_gltf_scene(models / "BoxTextured-glTF/BoxTextured.gltf");
    const GltfScene binary = load_gltf_scene(models / "BoxTextured-glTF-Binary/BoxTextured.glb");
    const GltfScene embedded =
        load_gltf_scene(models / "BoxTextured-glTF-Embedded/BoxTextured.gltf");
    for (const GltfScene* scene : {&separate, &binary, &embedded}) {
        ASSERT_EQ(scene->meshes.size(), 1u);
        ASSERT_EQ(scene->instances.size(), 1u);
        EXPECT_EQ(scene->meshes[0].indices.size(), 36u);
        EXPECT_EQ(scene->meshes[0].uvs.size(), scene->meshes[0].positions.size());
        const SceneMaterial& material = scene->materials.at(scene->meshes[0].material);
        ASSERT_TRUE(material.base_colour_texture);
        EXPECT_TRUE(material.base_colour_texture->srgb);
        EXPECT_FALSE(material.normal_texture);
        EXPECT_EQ(scene->meshes[0].positions, separate.meshes[0].positions);
        EXPECT_EQ(scene->meshes[0].uvs, separate.meshes[0].uvs);
        EXPECT_EQ(scene->meshes[0].indices, separate.meshes[0].indices);
        EXPECT_LT(scene->bounds_min.x, scene->bounds_max.x);
    }
    const SceneImage& file = separate.images.at(
        separate.materials.at(separate.meshes[0].material).base_colour_texture->image);
    EXPECT_EQ(file.path.filename(), "CesiumLogoFlat.png");
    EXPECT_TRUE(fs::exists(file.path)) << file.path;
    for (const GltfScene* scene : {&binary, &embedded}) {
        const SceneImage& image = scene->images.at(
            scene->materials.at(scene->meshes[0].material).base_colour_texture->image);
        ASSERT_GE(image.embedded.size(), 8u);
        EXPECT_EQ(std::memcmp(image.embedded.data(), "\x89PNG", 4), 0) << image.name;
        EXPECT_TRUE(image.path.empty());
    }
}

// KHR_texture_transform: each cell of the test scene offsets, rotates or scales its uvs, and
// the transform read is the file's, not assimp's own (whose offset also moves the origin and the
// rotation's centre for its flipped uvs).
TEST(GltfSceneTest, TextureTransformsAreTheFiles) {
    SKIP_WITHOUT_MODELS();
    const GltfScene scene = load_gltf_scene(models / "textureTransform/TextureTransformTest.gltf");
    // From TextureTransformTest.gltf, by material.
    const std::map<std::string, UvTransform> expected = {
        {"Offset U", {.offset = {0.5f, 0.0f}}},
        {"Offset V", {.offset = {0.0f, 0.5f}}},
        {"Offset UV", {.offset = {0.5f, 0.5f}}},
        {"Rotation", {.rotation = 0.39269908169872414f}},
        {"Scale", {.scale = {1.5f, 1.5f}}},
        {"All", {.offset = {-0.2f, -0.1f}, .rotation = 0.3f, .scale = {1.5f, 1.5f}}},
        {"Correct", {}},
        {"NotSupported", {}},
        {"Error", {}},
    };
    std::size_t seen = 0;
    for (const SceneMaterial& material : scene.materials) {
        const auto wanted = expected.find(material.name);
        if (wanted == expected.end()) continue;
        ++seen;
        ASSERT_TRUE(material.base_colour_texture) << material.name;
        const UvTransform& t = material.base_colour_texture->transform;
        const UvTransform& w = wanted->second;
        EXPECT_NEAR(t.offset.x, w.offset.x, 1e-5f) << material.name;
        EXPECT_NEAR(t.offset.y, w.offset.y, 1e-5f) << material.name;
        EXPECT_NEAR(t.rotation, w.rotation, 1e-6f) << material.name;
        EXPECT_NEAR(t.scale.x, w.scale.x, 1e-6f) << material.name;
        EXPECT_NEAR(t.scale.y, w.scale.y, 1e-6f) << material.name;
    }
    EXPECT_EQ(seen, expected.size());
}

// Normal maps are data: linear, whatever the file says.
TEST(GltfSceneTest, NormalMapsAreLinear) {
    SKIP_WITHOUT_MODELS();
    const GltfScene scene = load_gltf_scene(models / "ClearCoat-glTF/ClearCoatTest.gltf");
    std::size_t normal_maps = 0;
    for (const SceneMaterial& material : scene.materials) {
        if (!material.normal_texture) continue;
        ++normal_maps;
        EXPECT_FALSE(material.normal_texture->srgb) << material.name;
    }
    EXPECT_GT(normal_maps, 0u);
    EXPECT_GT(scene.instances.size(), 1u);
}

// Indices past the vertices: assimp drops the faces they belong to; what is left holds only
// indices inside its mesh.
TEST(GltfSceneTest, WhatIsLeftOfAMeshWithBadIndicesStaysInsideIt) {
    SKIP_WITHOUT_MODELS();
    const GltfScene scene = load_gltf_scene(models / "IndexOutOfRange/IndexOutOfRange.gltf");
    for (const SceneMesh& mesh : scene.meshes) {
        for (std::uint32_t index : mesh.indices) ASSERT_LT(index, mesh.positions.size());
    }
}

// Each malformed scene of the test models is refused with a message that says why.
TEST(GltfSceneTest, MalformedScenesAreRefusedWithTheReason) {
    SKIP_WITHOUT_MODELS();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"IndexOutOfRange/AllIndicesOutOfRange.gltf", "faces"},
        {"MissingBin/BoxTextured.gltf", "BoxTextured0.bin"},
        {"RecursiveNodes/RecursiveNodes.gltf", "recursive"},
        {"SchemaFailures/sceneWrongType.gltf", "scene"},
        {"TestNoRootNode/NoScene.gltf", "No scene"},
        {"TestNoRootNode/SceneWithoutNodes.gltf", "no triangles"},
        {"issue_3269/texcoord_crash.gltf", "TEXCOORD"},
        {"wrongTypes/badArray.gltf", "primitives"},
        {"wrongTypes/badExtension.gltf", "KHR_texture_transform"},
        {"wrongTypes/badNumber.gltf", "scale"},
        {"wrongTypes/badObject.gltf", "pbrMetallicRoughness"},
        {"wrongTypes/badString.gltf", "name"},
        {"wrongTypes/badUint.gltf", "index"},
        {"BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb", "not finite"},
    };
    for (const auto& [file, reason] : cases) {
        const std::string message = load_error(models / file);
        EXPECT_NE(message.find(reason), std::string::npos) << file << ": \"" << message << "\"";
        EXPECT_NE(message.find(file.substr(file.find('/') + 1)), std::string::npos) << message;
    }
}

// A one-triangle scene whose buffer is a data URI, with a sampler and an image named by `uri`.
std::string triangle_scene(int wrap_s, int wrap_t, const std::string& image_uri,
                           const std::string& buffer_uri = "") {
    // Three positions (36 bytes), three uvs (24) and three 16-bit indices (6), base64-encoded.
    std::vector<std::uint8_t> bytes(68, 0);
    const std::array<float, 15> floats = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1};
    std::memcpy(bytes.data(), floats.data(), 60);
    const std::array<std::uint16_t, 3> indices = {0, 1, 2};
    std::memcpy(bytes.data() + 60, indices.data(), 6);
    static const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string base64;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t v = bytes[i] << 16 | (i + 1 < bytes.size() ? bytes[i + 1] << 8 : 0) |
                                (i + 2 < bytes.size() ? bytes[i + 2] : 0);
        for (int k = 0; k < 4; ++k) {
            base64 +=
                i * 4 / 3 + k <= bytes.size() * 4 / 3 ? alphabet[(v >> (18 - 6 * k)) & 63] : '=';
        }
    }
    const std::string uri =
        buffer_uri.empty() ? "data:application/octet-stream;base64," + base64 : buffer_uri;
    return R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
 "nodes": [{"mesh": 0}],
 "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2,
                             "material": 0}]}],
 "materials": [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
 "textures": [{"sampler": 0, "source": 0}],
 "samplers": [{"wrapS": )" +
           std::to_string(wrap_s) + R"(, "wrapT": )" + std::to_string(wrap_t) + R"(}],
 "images": [{"uri": ")" +
           image_uri + R"("}],
 "buffers": [{"byteLength": 68, "uri": ")" +
           uri + R"("}],
 "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36},
                 {"buffer": 0, "byteOffset": 36, "byteLength": 24},
                 {"buffer": 0, "byteOffset": 60, "byteLength": 6}],
 "accessors": [
  {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
   "min": [0, 0, 0], "max": [1, 1, 0]},
  {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"},
  {"bufferView": 2, "componentType": 5123, "count": 3, "type": "SCALAR"}]})";
}

class GltfSceneFilesTest : public testing::Test {
protected:
    fs::path write(const std::string& name, const std::string& text) {
        const fs::path path = folder_.path() / name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    test::TemporaryFolder folder_;
};

// glTF's wrap modes (REPEAT 10497, MIRRORED_REPEAT 33648, CLAMP_TO_EDGE 33071), u and v apart.
TEST_F(GltfSceneFilesTest, WrapModesArePerAxis) {
    const GltfScene scene =
        load_gltf_scene(write("wrap.gltf", triangle_scene(33648, 33071, "a.png")));
    ASSERT_EQ(scene.meshes.size(), 1u);
    const SceneMaterial& material = scene.materials.at(scene.meshes[0].material);
    ASSERT_TRUE(material.base_colour_texture);
    EXPECT_EQ(material.base_colour_texture->wrap_u, AddressMode::mirrored_repeat);
    EXPECT_EQ(material.base_colour_texture->wrap_v, AddressMode::clamp_to_edge);
    EXPECT_EQ(scene.images.at(0).path, folder_.path() / "a.png");
    const GltfScene repeat =
        load_gltf_scene(write("repeat.gltf", triangle_scene(10497, 10497, "a.png")));
    const SceneMaterial& repeating = repeat.materials.at(repeat.meshes.at(0).material);
    EXPECT_EQ(repeating.base_colour_texture->wrap_u, AddressMode::repeat);
    EXPECT_EQ(repeating.base_colour_texture->wrap_v, AddressMode::repeat);
}

// References out of the scene's folder, to devices or to absolute paths are refused.
TEST_F(GltfSceneFilesTest, HostileReferencesAreRefused) {
    const auto expect_refused = [&](const std::string& name, const std::string& scene,
                                    const std::string& reason) {
        const std::string message = load_error(write(name, scene));
        EXPECT_NE(message.find(reason), std::string::npos) << name << ": \"" << message << "\"";
    };
    fs::create_symlink("/dev/zero", folder_.path() / "zero.bin");
    expect_refused("up.gltf", triangle_scene(10497, 10497, "../secret.png"),
                   "leaves the scene's folder");
    expect_refused("abs.gltf", triangle_scene(10497, 10497, "/etc/passwd"), "absolute path");
    // A buffer's absolute path is taken inside the scene's folder, where there is none.
    expect_refused("zero.gltf", triangle_scene(10497, 10497, "a.png", "/dev/zero"),
                   "could not open referenced file \"/dev/zero\"");
    expect_refused("link.gltf", triangle_scene(10497, 10497, "a.png", "zero.bin"),
                   "outside the scene's folder");
    ASSERT_EQ(::mkfifo((folder_.path() / "pipe.bin").c_str(), 0600), 0);
    expect_refused("fifo.gltf", triangle_scene(10497, 10497, "a.png", "pipe.bin"),
                   "not a regular file");
}

// A .glb whose chunk says it is longer than the file (assimp would allocate what it says
// first: 2 GiB for this 4.7 KB file), or whose header lies about its size, is refused first.
TEST_F(GltfSceneFilesTest, AGlbThatLiesAboutItsLengthsIsRefusedBeforeItIsRead) {
    SKIP_WITHOUT_MODELS();
    std::ifstream in(models / "BoxTextured-glTF-Binary/BoxTextured.glb", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 20u);
    std::string chunk = bytes;
    const std::uint32_t huge = 0x80000570u;
    std::memcpy(chunk.data() + 12, &huge, 4);
    const std::string chunk_message = load_error(write("chunk.glb", chunk));
    EXPECT_NE(chunk_message.find("runs past the end"), std::string::npos) << chunk_message;
    const std::string cut = bytes.substr(0, bytes.size() - 100);
    const std::string cut_message = load_error(write("cut.glb", cut));
    EXPECT_NE(cut_message.find("bytes long, the file is"), std::string::npos) << cut_message;
    const GltfScene whole = load_gltf_scene(write("whole.glb", bytes));
    EXPECT_EQ(whole.meshes.size(), 1u);
}

// Counts past the limits are refused before they are used.
TEST_F(GltfSceneFilesTest, LimitsAreEnforced) {
    const fs::path path = write("small.gltf", triangle_scene(10497, 10497, "a.png"));
    GltfSceneLimits few;
    few.max_vertices = 2;
    EXPECT_NE(load_error(path, few).find("more than 2 vertices"), std::string::npos);
    GltfSceneLimits tiny;
    tiny.max_file_bytes = 100;
    EXPECT_NE(load_error(path, tiny).find("(at most 100)"), std::string::npos);
    EXPECT_NE(load_error(folder_.path() / "missing.gltf").find("cannot be opened"),
              std::string::npos);
}

}  // namespace
}  // namespace vtpage::viewer
