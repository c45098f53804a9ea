// What the mesh pipelines are handed is checked before it reaches the device
// (check_scene_geometry, renderer/vulkan_scene_geometry.hpp): a packed scene passes, and data
// whose draws, instances or materials reach past their arrays, or that is empty, is refused
// with invalid_argument, since the shaders pull vertices and records by device address without
// bounds.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "renderer/vulkan_scene_geometry.hpp"
#include "scene/scene_packing.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::viewer {
namespace {

// Two meshes (a triangle and a quad), three instances, two materials.
SceneGeometryData packed_scene() {
    GltfScene scene;
    scene.materials.resize(2);
    scene.materials[1].alpha_mode = AlphaMode::blend;
    SceneMesh triangle;
    triangle.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    triangle.normals.assign(3, glm::vec3(0, 0, 1));
    triangle.uvs.assign(3, glm::vec2(0));
    triangle.indices = {0, 1, 2};
    SceneMesh quad;
    quad.positions = {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
    quad.normals.assign(4, glm::vec3(0, 0, 1));
    quad.uvs.assign(4, glm::vec2(0));
    quad.indices = {0, 1, 2, 0, 2, 3};
    quad.material = 1;
    scene.meshes = {triangle, quad};
    scene.instances = {{.mesh = 0}, {.mesh = 1}, {.mesh = 0}};
    scene.bounds_max = {1, 1, 1};
    return pack_scene(scene, std::vector<MaterialTextures>(2, MaterialTextures{0, 1, 2, 3, 4}));
}

void expect_refused(const std::string& what, const std::function<void(SceneGeometryData&)>& spoil,
                    const std::string& says) {
    SceneGeometryData data = packed_scene();
    spoil(data);
    try {
        check_scene_geometry(data);
        ADD_FAILURE() << what << ": taken";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument) << what << ": " << error.what();
        EXPECT_NE(std::string(error.what()).find(says), std::string::npos)
            << what << ": " << error.what();
    }
}

TEST(SceneGeometryCheckTest, APackedSceneIsTaken) {
    const SceneGeometryData data = packed_scene();
    ASSERT_EQ(data.draws.size(), 3u);
    EXPECT_NO_THROW(check_scene_geometry(data));
}

TEST(SceneGeometryCheckTest, DrawsOutsideTheDataAreRefused) {
    expect_refused(
        "indices past the end",
        [](SceneGeometryData& d) { d.draws[0].first_index = std::uint32_t(d.indices.size()) - 2; },
        "lies outside");
    expect_refused(
        "indices whose end wraps around 32 bits",
        [](SceneGeometryData& d) { d.draws[0].first_index = 0xffffffffu; }, "lies outside");
    expect_refused(
        "an instance past the end",
        [](SceneGeometryData& d) { d.draws[1].instance = std::uint32_t(d.instances.size()); },
        "of instance 3");
    expect_refused(
        "an index count not a multiple of 3",
        [](SceneGeometryData& d) { d.draws[1].index_count = 4; }, "lies outside");
    expect_refused(
        "no indices", [](SceneGeometryData& d) { d.draws[0].index_count = 0; }, "lies outside");
    expect_refused(
        "a vertex offset past the end",
        [](SceneGeometryData& d) { d.draws[0].vertex_offset = std::int32_t(d.vertices.size()); },
        "lies outside");
    expect_refused(
        "a negative vertex offset", [](SceneGeometryData& d) { d.draws[0].vertex_offset = -1; },
        "lies outside");
}

// The shaders read vertices[gl_VertexIndex], the index plus the draw's vertex offset: an index
// that reaches past the vertices from there would read past their buffer.
TEST(SceneGeometryCheckTest, AnIndexReachingPastTheVerticesIsRefused) {
    expect_refused(
        "an index past the vertices",
        [](SceneGeometryData& d) { d.indices[1] = std::uint32_t(d.vertices.size()); },
        "reaches past");
    expect_refused(
        "an index past the vertices from the draw's offset",
        [](SceneGeometryData& d) {
            // The quad's draw (the last: blended) starts at vertex 3 of 7.
            ASSERT_EQ(d.draws.back().vertex_offset, 3);
            d.indices[d.draws.back().first_index + 2] = 4;
        },
        "reaches past");
    // The same index is fine from the first mesh's offset.
    SceneGeometryData data = packed_scene();
    data.draws.back().vertex_offset = 0;
    data.indices[data.draws.back().first_index + 2] = 4;
    EXPECT_NO_THROW(check_scene_geometry(data));
}

TEST(SceneGeometryCheckTest, AnInstanceNamingAMaterialPastTheEndIsRefused) {
    expect_refused(
        "a material past the end",
        [](SceneGeometryData& d) { d.instances[2].material = std::uint32_t(d.materials.size()); },
        "names material 2 of 2");
}

TEST(SceneGeometryCheckTest, EmptyDataIsRefused) {
    const std::string says = "a scene needs vertices, indices, instances, materials and draws";
    expect_refused(
        "nothing", [](SceneGeometryData& d) { d = {}; }, says);
    expect_refused(
        "no vertices", [](SceneGeometryData& d) { d.vertices.clear(); }, says);
    expect_refused(
        "no indices", [](SceneGeometryData& d) { d.indices.clear(); }, says);
    expect_refused(
        "no instances", [](SceneGeometryData& d) { d.instances.clear(); }, says);
    expect_refused(
        "no materials", [](SceneGeometryData& d) { d.materials.clear(); }, says);
    expect_refused(
        "no draws", [](SceneGeometryData& d) { d.draws.clear(); }, says);
}

}  // namespace
}  // namespace vtpage::viewer
