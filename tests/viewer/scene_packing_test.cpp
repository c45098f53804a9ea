// A glTF scene packed for the mesh pipelines (scene/scene_packing.hpp): on Debian's test models
// (assimp-testmodels) and on scenes made here, every vertex, index, instance and draw is the
// scene's and lies inside the data, blended draws come last, each material's slots carry the
// textures given and their uv transforms as the rows the shaders apply, and normals follow the
// inverse transpose of a non-uniformly scaled instance.
#include "scene/scene_packing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <glm/gtc/matrix_transform.hpp>
#include <numbers>
#include <set>
#include <string>
#include <vector>

namespace vtpage::viewer {
namespace {

namespace fs = std::filesystem;

const fs::path models = "/usr/share/assimp/models/glTF2";

#define SKIP_WITHOUT_MODELS() \
    if (!fs::exists(models)) GTEST_SKIP() << models << " is missing (Debian: assimp-testmodels)"

// A distinct texture id for every slot of every material (absent slots too: the packer must
// leave those without a texture).
std::vector<MaterialTextures> texture_ids(const GltfScene& scene) {
    std::vector<MaterialTextures> ids(scene.materials.size());
    for (std::size_t m = 0; m < ids.size(); ++m) {
        for (std::uint32_t slot = 0; slot < scene_slot_count; ++slot) {
            ids[m][slot] = std::uint32_t(m * 8 + slot + 1);
        }
    }
    return ids;
}

glm::vec2 rows_apply(const float row0[4], const float row1[4], glm::vec2 uv) {
    return {row0[0] * uv.x + row0[1] * uv.y + row0[2], row1[0] * uv.x + row1[1] * uv.y + row1[2]};
}

std::vector<glm::vec2> sample_uvs() {
    std::vector<glm::vec2> uvs;
    for (float u : {-1.25f, 0.0f, 0.3f, 0.5f, 1.0f, 2.75f}) {
        for (float v : {-0.5f, 0.0f, 0.2f, 0.9f, 1.0f, 4.0f}) uvs.push_back({u, v});
    }
    return uvs;
}

void expect_rows_apply_the_transform(const UvTransform& transform, const std::string& what) {
    float row0[4], row1[4];
    transform_rows(transform, row0, row1);
    for (const glm::vec2 uv : sample_uvs()) {
        const glm::vec2 want = transform.apply(uv);
        const glm::vec2 got = rows_apply(row0, row1, uv);
        const float tolerance = 1e-5f * (1 + std::abs(want.x) + std::abs(want.y));
        EXPECT_NEAR(got.x, want.x, tolerance) << what << " at uv " << uv.x << ", " << uv.y;
        EXPECT_NEAR(got.y, want.y, tolerance) << what << " at uv " << uv.x << ", " << uv.y;
    }
}

// Everything pack_scene promises, checked against the scene it packed.
void expect_packed(const GltfScene& scene, const std::vector<MaterialTextures>& ids,
                   const SceneGeometryData& data) {
    std::size_t vertices = 0, indices = 0;
    for (const SceneMesh& mesh : scene.meshes) {
        vertices += mesh.positions.size();
        indices += mesh.indices.size();
    }
    EXPECT_EQ(data.vertices.size(), vertices);
    EXPECT_EQ(data.indices.size(), indices);
    ASSERT_EQ(data.instances.size(), scene.instances.size());
    ASSERT_EQ(data.draws.size(), scene.instances.size());
    ASSERT_EQ(data.materials.size(), scene.materials.size());

    // The instances in the scene's order, each with its world transform and its mesh's material.
    for (std::size_t i = 0; i < scene.instances.size(); ++i) {
        const glm::mat4& world = scene.instances[i].world;
        for (int k = 0; k < 16; ++k) {
            EXPECT_EQ(data.instances[i].world[k], world[k / 4][k % 4]) << "instance " << i;
        }
        EXPECT_EQ(data.instances[i].material, scene.meshes[scene.instances[i].mesh].material);
    }

    // One draw per instance, inside the data, pulling the instance's mesh; blended ones last.
    std::set<std::uint32_t> drawn;
    bool blended_seen = false;
    for (std::size_t d = 0; d < data.draws.size(); ++d) {
        const SceneGpuDraw& draw = data.draws[d];
        ASSERT_LT(draw.instance, data.instances.size()) << "draw " << d;
        EXPECT_TRUE(drawn.insert(draw.instance).second) << "instance drawn twice: " << d;
        const SceneMesh& mesh = scene.meshes[scene.instances[draw.instance].mesh];
        const SceneMaterial& material = scene.materials[mesh.material];
        EXPECT_EQ(draw.blended, material.alpha_mode == AlphaMode::blend) << "draw " << d;
        if (blended_seen) {
            EXPECT_TRUE(draw.blended) << "draw " << d << " after a blended one";
        }
        blended_seen |= draw.blended;
        ASSERT_EQ(draw.index_count, mesh.indices.size()) << "draw " << d;
        EXPECT_EQ(draw.index_count % 3, 0u);
        ASSERT_LE(std::uint64_t(draw.first_index) + draw.index_count, data.indices.size());
        ASSERT_GE(draw.vertex_offset, 0);
        ASSERT_LE(std::uint64_t(draw.vertex_offset) + mesh.positions.size(), data.vertices.size());
        for (std::uint32_t k = 0; k < draw.index_count; ++k) {
            const std::uint32_t index = data.indices[draw.first_index + k];
            ASSERT_EQ(index, mesh.indices[k]) << "draw " << d << " index " << k;
            const SceneGpuVertex& vertex = data.vertices[std::size_t(draw.vertex_offset) + index];
            const glm::vec3& p = mesh.positions[index];
            const glm::vec3& n = mesh.normals[index];
            const glm::vec2& uv = mesh.uvs[index];
            ASSERT_EQ(glm::vec3(vertex.position[0], vertex.position[1], vertex.position[2]), p);
            ASSERT_EQ(glm::vec3(vertex.normal[0], vertex.normal[1], vertex.normal[2]), n);
            ASSERT_EQ(glm::vec2(vertex.u, vertex.v), uv);
        }
    }

    // Each material's factors, alpha mode, slots' textures and uv transforms.
    for (std::size_t m = 0; m < scene.materials.size(); ++m) {
        const SceneMaterial& material = scene.materials[m];
        const SceneGpuMaterial& packed = data.materials[m];
        EXPECT_EQ(packed.alpha_mode, std::uint32_t(material.alpha_mode)) << material.name;
        EXPECT_EQ(packed.double_sided, material.double_sided ? 1u : 0u) << material.name;
        EXPECT_EQ(packed.roughness_cutoff[1], material.alpha_cutoff) << material.name;
        for (int c = 0; c < 4; ++c) EXPECT_EQ(packed.base_colour[c], material.base_colour[c]);
        for (std::uint32_t slot = 0; slot < scene_slot_count; ++slot) {
            const auto& given = texture_slot(material, MaterialSlot(slot));
            EXPECT_EQ(packed.textures[slot], given ? ids[m][slot] : scene_no_texture)
                << material.name << " slot " << slot;
            const UvTransform transform = given ? given->transform : UvTransform{};
            for (const glm::vec2 uv : sample_uvs()) {
                const glm::vec2 got =
                    rows_apply(packed.transforms[slot * 2], packed.transforms[slot * 2 + 1], uv);
                const glm::vec2 want = transform.apply(uv);
                EXPECT_NEAR(got.x, want.x, 1e-4f) << material.name << " slot " << slot;
                EXPECT_NEAR(got.y, want.y, 1e-4f) << material.name << " slot " << slot;
            }
        }
    }
}

// The slots the packer reads, in the shaders' order.
TEST(ScenePackingTest, EachSlotIsTheMaterialsOwn) {
    SceneMaterial material;
    material.base_colour_texture = TextureSlot{.image = 1};
    material.normal_texture = TextureSlot{.image = 2};
    material.metallic_roughness_texture = TextureSlot{.image = 3};
    material.occlusion_texture = TextureSlot{.image = 4};
    material.emissive_texture = TextureSlot{.image = 5};
    for (std::uint32_t slot = 0; slot < scene_slot_count; ++slot) {
        const auto& given = texture_slot(material, MaterialSlot(slot));
        ASSERT_TRUE(given);
        EXPECT_EQ(given->image, slot + 1);
    }
}

// The textured box in each of its forms: one instance of one mesh, its base colour the only slot.
TEST(ScenePackingTest, TheTexturedBoxPacksAsItIs) {
    SKIP_WITHOUT_MODELS();
    for (const char* file :
         {"BoxTextured-glTF/BoxTextured.gltf", "BoxTextured-glTF-Binary/BoxTextured.glb",
          "BoxTextured-glTF-Embedded/BoxTextured.gltf"}) {
        SCOPED_TRACE(file);
        const GltfScene scene = load_gltf_scene(models / file);
        const std::vector<MaterialTextures> ids = texture_ids(scene);
        const SceneGeometryData data = pack_scene(scene, ids);
        expect_packed(scene, ids, data);
        ASSERT_EQ(data.draws.size(), 1u);
        EXPECT_EQ(data.draws[0].index_count, 36u);
        const SceneGpuMaterial& material = data.materials.at(data.instances[0].material);
        EXPECT_NE(material.textures[std::uint32_t(MaterialSlot::base_colour)], scene_no_texture);
        EXPECT_EQ(material.textures[std::uint32_t(MaterialSlot::normal)], scene_no_texture);
    }
}

// Nine cells with their own texture transforms: the rows packed apply each one.
TEST(ScenePackingTest, TheTextureTransformTestPacksItsTransforms) {
    SKIP_WITHOUT_MODELS();
    const GltfScene scene = load_gltf_scene(models / "textureTransform/TextureTransformTest.gltf");
    const std::vector<MaterialTextures> ids = texture_ids(scene);
    expect_packed(scene, ids, pack_scene(scene, ids));
    std::size_t transformed = 0;
    for (const SceneMaterial& material : scene.materials) {
        if (!material.base_colour_texture) continue;
        transformed += !material.base_colour_texture->transform.identity();
        expect_rows_apply_the_transform(material.base_colour_texture->transform, material.name);
    }
    EXPECT_EQ(transformed, 6u) << "offset u, v and uv, rotation, scale and all three";
}

// Many instances, normal maps, a metallic-roughness map, emissive labels and one blended
// coating drawn in the middle of the scene's order: its draw moves to the end.
TEST(ScenePackingTest, TheClearCoatScenesBlendedCoatingIsDrawnLast) {
    SKIP_WITHOUT_MODELS();
    const GltfScene scene = load_gltf_scene(models / "ClearCoat-glTF/ClearCoatTest.gltf");
    const std::vector<MaterialTextures> ids = texture_ids(scene);
    const SceneGeometryData data = pack_scene(scene, ids);
    expect_packed(scene, ids, data);
    std::size_t blended = 0, normal_maps = 0, emissive = 0, metallic_roughness = 0;
    for (const SceneGpuDraw& draw : data.draws) blended += draw.blended;
    for (const SceneGpuMaterial& material : data.materials) {
        normal_maps += material.textures[std::uint32_t(MaterialSlot::normal)] != scene_no_texture;
        emissive += material.textures[std::uint32_t(MaterialSlot::emissive)] != scene_no_texture;
        metallic_roughness +=
            material.textures[std::uint32_t(MaterialSlot::metallic_roughness)] != scene_no_texture;
    }
    EXPECT_EQ(blended, 1u);
    EXPECT_GT(normal_maps, 0u);
    EXPECT_GT(emissive, 0u);
    EXPECT_GT(metallic_roughness, 0u);
    ASSERT_TRUE(data.draws.back().blended);
    // In the scene's order the blended instance is not the last: the packer moved it.
    std::uint32_t last_opaque = 0;
    for (const SceneGpuDraw& draw : data.draws) {
        if (!draw.blended) last_opaque = std::max(last_opaque, draw.instance);
    }
    EXPECT_GT(last_opaque, data.draws.back().instance);
}

// A mesh of one triangle, its normals along +z.
SceneMesh triangle(std::uint32_t material, float shift) {
    SceneMesh mesh;
    mesh.positions = {{shift, 0, 0}, {shift + 1, 0, 0}, {shift, 1, 0}};
    mesh.normals.assign(3, glm::vec3(0, 0, 1));
    mesh.uvs = {{0, 0}, {1, 0}, {0, 1}};
    mesh.indices = {0, 1, 2};
    mesh.material = material;
    return mesh;
}

// Opaque, masked and blended materials, each slot given somewhere, instances in mixed order.
GltfScene mixed_scene() {
    GltfScene scene;
    scene.images.resize(2);
    SceneMaterial opaque;
    opaque.name = "opaque";
    opaque.base_colour_texture = TextureSlot{.image = 0, .srgb = true};
    opaque.occlusion_texture = TextureSlot{.image = 1};
    opaque.occlusion_texture->transform = {.offset = {0.25f, 0.5f}, .rotation = 1.0f};
    SceneMaterial masked;
    masked.name = "masked";
    masked.alpha_mode = AlphaMode::mask;
    masked.alpha_cutoff = 0.3f;
    masked.double_sided = true;
    masked.base_colour_texture = TextureSlot{.image = 0};
    masked.base_colour_texture->transform = {.scale = {2.0f, 0.5f}};
    masked.normal_texture = TextureSlot{.image = 1};
    SceneMaterial blended;
    blended.name = "blended";
    blended.alpha_mode = AlphaMode::blend;
    blended.base_colour = {1.0f, 0.5f, 0.25f, 0.5f};
    blended.metallic_roughness_texture = TextureSlot{.image = 1};
    blended.emissive_texture = TextureSlot{.image = 0};
    scene.materials = {opaque, masked, blended};
    scene.meshes = {triangle(2, 0), triangle(1, 2), triangle(0, 4), triangle(2, 6)};
    for (std::uint32_t mesh : {0u, 1u, 2u, 3u, 1u}) {
        scene.instances.push_back({.mesh = mesh, .world = glm::mat4(1.0f)});
    }
    scene.bounds_max = {7, 1, 0};
    return scene;
}

TEST(ScenePackingTest, MaskedDrawsStayWithTheOpaqueOnesAndBlendedOnesComeLastInOrder) {
    const GltfScene scene = mixed_scene();
    const std::vector<MaterialTextures> ids = texture_ids(scene);
    const SceneGeometryData data = pack_scene(scene, ids);
    expect_packed(scene, ids, data);
    std::vector<std::uint32_t> order;
    for (const SceneGpuDraw& draw : data.draws) order.push_back(draw.instance);
    // Instances 0 and 3 are blended; 1 and 4 masked, 2 opaque.
    EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 2, 4, 0, 3}));
    EXPECT_EQ(data.materials[1].alpha_mode, 1u);
    EXPECT_EQ(data.materials[1].double_sided, 1u);
    EXPECT_FLOAT_EQ(data.materials[1].roughness_cutoff[1], 0.3f);
    EXPECT_EQ(data.materials[2].alpha_mode, 2u);
    // Two instances of one mesh share its vertices and indices.
    EXPECT_EQ(data.draws[0].first_index, data.draws[2].first_index);
    EXPECT_EQ(data.draws[0].vertex_offset, data.draws[2].vertex_offset);
    EXPECT_EQ(data.vertices.size(), 12u);
}

// Normals go through the inverse transpose of the world transform's upper 3 x 3: for a rotation
// times a scale, the rotation times the inverse scale; a scaled surface's normal stays normal.
TEST(ScenePackingTest, NormalsOfANonUniformlyScaledInstanceStayPerpendicular) {
    GltfScene scene = mixed_scene();
    const glm::vec3 scale(2.0f, 0.5f, 3.0f);
    const glm::mat4 rotation =
        glm::rotate(glm::mat4(1.0f), 0.7f, glm::normalize(glm::vec3(1, 2, 3)));
    const glm::mat4 world = glm::translate(glm::mat4(1.0f), glm::vec3(5, -2, 9)) * rotation *
                            glm::scale(glm::mat4(1.0f), scale);
    scene.instances[2].world = world;
    const SceneGeometryData data = pack_scene(scene, texture_ids(scene));
    const SceneGpuInstance& packed = data.instances.at(2);
    const glm::mat3 expected =
        glm::mat3(rotation) * glm::mat3(glm::scale(glm::mat4(1.0f), 1.0f / scale));
    for (int column = 0; column < 4; ++column) {
        for (int row = 0; row < 4; ++row) {
            const float want = column < 3 && row < 3 ? expected[column][row]
                                                     : (column == 3 && row == 3 ? 1.0f : 0.0f);
            EXPECT_NEAR(packed.normal[column * 4 + row], want, 1e-5f)
                << "column " << column << " row " << row;
        }
    }
    glm::mat4 normal_matrix;
    std::memcpy(&normal_matrix[0][0], packed.normal, sizeof(packed.normal));
    // A slanted surface: its tangents and its normal, through the instance.
    const glm::vec3 a = glm::normalize(glm::vec3(1, 1, 0)), b = glm::normalize(glm::vec3(0, 1, 2));
    const glm::vec3 n = glm::cross(a, b);
    const glm::vec3 world_n = glm::vec3(normal_matrix * glm::vec4(n, 0));
    for (const glm::vec3& tangent : {a, b}) {
        const glm::vec3 world_t = glm::vec3(world * glm::vec4(tangent, 0));
        EXPECT_NEAR(glm::dot(glm::normalize(world_t), glm::normalize(world_n)), 0.0f, 1e-5f);
    }
    // The world transform itself would not keep it perpendicular (so the check above can fail).
    const glm::vec3 wrong = glm::vec3(world * glm::vec4(n, 0));
    EXPECT_GT(std::abs(glm::dot(glm::normalize(glm::vec3(world * glm::vec4(a, 0))),
                                glm::normalize(wrong))),
              0.05f);
}

// KHR_texture_transform's rows for many offsets, rotations and scales (negative ones too).
TEST(ScenePackingTest, TransformRowsApplyTheTransform) {
    const float pi = std::numbers::pi_v<float>;
    for (const float rotation : {0.0f, 0.3f, -1.0f, pi / 2, 2.5f, pi}) {
        for (const glm::vec2 scale :
             {glm::vec2(1, 1), glm::vec2(1.5f, 1.5f), glm::vec2(2, -0.5f), glm::vec2(-1, 3)}) {
            for (const glm::vec2 offset : {glm::vec2(0, 0), glm::vec2(0.5f, -0.25f),
                                           glm::vec2(-0.2f, -0.1f), glm::vec2(3, 7)}) {
                const UvTransform transform{.offset = offset, .rotation = rotation, .scale = scale};
                expect_rows_apply_the_transform(
                    transform, "rotation " + std::to_string(rotation) + " scale " +
                                   std::to_string(scale.x) + "," + std::to_string(scale.y) +
                                   " offset " + std::to_string(offset.x) + "," +
                                   std::to_string(offset.y));
            }
        }
    }
}

// The extension's own example: offset (0, 1), a quarter turn and half the scale use only the
// lower-left quadrant of the image (v down), turned clockwise.
TEST(ScenePackingTest, TheTransformIsTheExtensionsExample) {
    const UvTransform transform{
        .offset = {0, 1}, .rotation = std::numbers::pi_v<float> / 2, .scale = {0.5f, 0.5f}};
    const auto expect_at = [&](glm::vec2 uv, glm::vec2 want) {
        const glm::vec2 got = transform.apply(uv);
        EXPECT_NEAR(got.x, want.x, 1e-6f) << uv.x << ", " << uv.y;
        EXPECT_NEAR(got.y, want.y, 1e-6f) << uv.x << ", " << uv.y;
    };
    expect_at({0, 0}, {0, 1});
    expect_at({1, 0}, {0, 0.5f});
    expect_at({0, 1}, {0.5f, 1});
    expect_at({1, 1}, {0.5f, 0.5f});
}

TEST(ScenePackingTest, TheWrongNumberOfTextureSetsIsRefused) {
    const GltfScene scene = mixed_scene();
    std::vector<MaterialTextures> ids = texture_ids(scene);
    ids.pop_back();
    try {
        pack_scene(scene, ids);
        ADD_FAILURE() << "two sets of textures for three materials were taken";
    } catch (const SceneError& error) {
        EXPECT_NE(std::string(error.what()).find("3 materials and 2 sets"), std::string::npos)
            << error.what();
    }
    ids = texture_ids(scene);
    ids.push_back({});
    EXPECT_THROW(pack_scene(scene, ids), SceneError);
    EXPECT_THROW(pack_scene(scene, {}), SceneError);
}

// The std430 record scene_frame.glsl reads: the stack's id where the old padding was, each
// slot's layer and the stack's slot after the transforms, the record a multiple of 16 bytes.
TEST(ScenePackingTest, TheMaterialRecordKeepsTheShadersLayout) {
    EXPECT_EQ(offsetof(SceneGpuMaterial, textures), 48u);
    EXPECT_EQ(offsetof(SceneGpuMaterial, alpha_mode), 68u);
    EXPECT_EQ(offsetof(SceneGpuMaterial, double_sided), 72u);
    EXPECT_EQ(offsetof(SceneGpuMaterial, stack), 76u);
    EXPECT_EQ(offsetof(SceneGpuMaterial, transforms), 80u);
    EXPECT_EQ(offsetof(SceneGpuMaterial, stack_layers), 240u);
    EXPECT_EQ(offsetof(SceneGpuMaterial, stack_slot), 260u);
    EXPECT_EQ(sizeof(SceneGpuMaterial) % 16, 0u);
    const SceneGpuMaterial fresh;
    EXPECT_EQ(fresh.stack, scene_no_texture);
    for (const std::uint32_t layer : fresh.stack_layers) EXPECT_EQ(layer, scene_no_layer);
}

// Without stacks (none given, or a material without one) every material packs as before: no
// stack, no slot a layer.
TEST(ScenePackingTest, MaterialsWithoutAStackHaveNone) {
    const GltfScene scene = mixed_scene();
    const std::vector<MaterialTextures> ids = texture_ids(scene);
    for (const SceneGeometryData& data :
         {pack_scene(scene, ids),
          pack_scene(scene, ids, std::vector<MaterialStackTexture>(scene.materials.size()))}) {
        expect_packed(scene, ids, data);
        for (const SceneGpuMaterial& material : data.materials) {
            EXPECT_EQ(material.stack, scene_no_texture);
            for (const std::uint32_t layer : material.stack_layers)
                EXPECT_EQ(layer, scene_no_layer);
        }
    }
}

// A material's stack: its id, each member slot's layer (others none), the slot whose transform
// it is sampled with (its first layer's); the slots keep their own textures for the reference.
TEST(ScenePackingTest, AStacksLayersAreItsSlots) {
    GltfScene scene = mixed_scene();
    SceneMaterial& material = scene.materials[0];
    material.normal_texture = TextureSlot{.image = 1};
    material.occlusion_texture = TextureSlot{.image = 0};
    const std::vector<MaterialTextures> ids = texture_ids(scene);
    std::vector<MaterialStackTexture> stacks(scene.materials.size());
    stacks[0].texture = 77;
    stacks[0].layers = {-1, 0, -1, 1, -1};  // normal, occlusion
    stacks[1].texture = 78;
    stacks[1].layers = {0, 1, -1, -1, -1};  // base colour, normal
    const SceneGeometryData data = pack_scene(scene, ids, stacks);
    expect_packed(scene, ids, data);
    const SceneGpuMaterial& first = data.materials[0];
    EXPECT_EQ(first.stack, 77u);
    EXPECT_EQ(first.stack_slot, 1u);
    const std::uint32_t first_layers[] = {scene_no_layer, 0, scene_no_layer, 1, scene_no_layer};
    for (std::uint32_t slot = 0; slot < scene_slot_count; ++slot) {
        EXPECT_EQ(first.stack_layers[slot], first_layers[slot]) << "slot " << slot;
    }
    const SceneGpuMaterial& second = data.materials[1];
    EXPECT_EQ(second.stack, 78u);
    EXPECT_EQ(second.stack_slot, 0u);
    EXPECT_EQ(second.stack_layers[0], 0u);
    EXPECT_EQ(second.stack_layers[1], 1u);
    EXPECT_EQ(data.materials[2].stack, scene_no_texture);
}

TEST(ScenePackingTest, AStackOfTheWrongShapeIsRefused) {
    const GltfScene scene = mixed_scene();
    const std::vector<MaterialTextures> ids = texture_ids(scene);
    std::vector<MaterialStackTexture> stacks(scene.materials.size() - 1);
    EXPECT_THROW(pack_scene(scene, ids, stacks), SceneError);
    stacks.resize(scene.materials.size());
    stacks[2].texture = 5;
    stacks[2].layers = {0, -1, -1, -1, -1};  // the blended material has no base colour texture
    EXPECT_THROW(pack_scene(scene, ids, stacks), SceneError);
    stacks[2].layers = {-1, -1, 4, -1, -1};  // past the four layers a stack has
    EXPECT_THROW(pack_scene(scene, ids, stacks), SceneError);
}

}  // namespace
}  // namespace vtpage::viewer
