// What the viewer's mesh pipelines read by device address (shaders/scene_frame.glsl), byte for
// byte: vertices pulled by index, one record per drawn instance (its world transforms and its
// material) and one per material (factors, the virtual textures of its slots and their uv
// transforms). Plain data: the scene packer (scene/scene_packing.hpp) fills them without Vulkan.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vtpage::viewer {

struct SceneGpuVertex {
    float position[3];
    float u;
    float normal[3];
    float v;
};
static_assert(sizeof(SceneGpuVertex) == 32, "scene_frame.glsl: SceneVertex");

struct SceneGpuInstance {
    float world[16];   // column-major
    float normal[16];  // the inverse transpose of world's upper 3 x 3, as a mat4
    std::uint32_t material = 0;
    std::uint32_t unused[3] = {};
};
static_assert(sizeof(SceneGpuInstance) == 144, "scene_frame.glsl: SceneInstance");

// The material slots: base colour, normal, metallic-roughness, occlusion, emissive (as the
// scene's MaterialSlot orders them).
inline constexpr std::uint32_t scene_slot_count = 5;
// A slot without a texture, a material without a stack.
inline constexpr std::uint32_t scene_no_texture = 0xffffffffu;
// A slot that is not a layer of its material's stack.
inline constexpr std::uint32_t scene_no_layer = 0xffffffffu;

struct SceneGpuMaterial {
    float base_colour[4] = {1, 1, 1, 1};
    float emissive_metallic[4] = {0, 0, 0, 1};    // emissive rgb, metallic
    float roughness_cutoff[4] = {1, 0.5f, 0, 0};  // roughness, alpha cutoff
    // The virtual texture of each slot (scene_no_texture where none), then the alpha mode
    // (0 opaque, 1 mask, 2 blend), whether both faces are drawn, and the material stack whose
    // layers some of the slots are (scene_no_texture where none): drawn through vtpage, those
    // slots sample the stack; the reference samples each slot's own texture.
    std::uint32_t textures[scene_slot_count] = {
        scene_no_texture, scene_no_texture, scene_no_texture, scene_no_texture, scene_no_texture};
    std::uint32_t alpha_mode = 0;
    std::uint32_t double_sided = 0;
    std::uint32_t stack = scene_no_texture;
    // Each slot's uv transform (KHR_texture_transform) as two rows of a 2 x 3 matrix:
    // uv' = (dot(row0.xy, uv) + row0.z, dot(row1.xy, uv) + row1.z).
    float transforms[scene_slot_count * 2][4] = {
        {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0},
        {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}};
    // Each slot's layer in the stack (scene_no_layer where it is not one), and the slot whose uv
    // transform the stack is sampled with (its first layer's: every layer's is the same).
    std::uint32_t stack_layers[scene_slot_count] = {scene_no_layer, scene_no_layer, scene_no_layer,
                                                    scene_no_layer, scene_no_layer};
    std::uint32_t stack_slot = 0;
    std::uint32_t unused[2] = {};
};
static_assert(offsetof(SceneGpuMaterial, textures) == 48, "scene_frame.glsl: SceneMaterial");
static_assert(offsetof(SceneGpuMaterial, stack) == 76, "scene_frame.glsl: SceneMaterial");
static_assert(offsetof(SceneGpuMaterial, transforms) == 80, "scene_frame.glsl: SceneMaterial");
static_assert(offsetof(SceneGpuMaterial, stack_layers) == 240, "scene_frame.glsl: SceneMaterial");
static_assert(offsetof(SceneGpuMaterial, stack_slot) == 260, "scene_frame.glsl: SceneMaterial");
static_assert(sizeof(SceneGpuMaterial) == 272, "scene_frame.glsl: SceneMaterial");

// One indexed draw: an instance of a mesh's triangles.
struct SceneGpuDraw {
    std::uint32_t first_index = 0;
    std::uint32_t index_count = 0;
    std::int32_t vertex_offset = 0;
    std::uint32_t instance = 0;  // into the instances; the shaders read it as gl_InstanceIndex
    bool blended = false;        // drawn after every opaque and masked draw, without depth writes
    // Whether its material samples a stack: drawn with the pipelines built for stacks (set by
    // VulkanSceneGeometry from the material), the others with pipelines that leave them out.
    bool stacked = false;
    // Whether its material is alpha-masked (set by VulkanSceneGeometry): its fragments may
    // discard, so that its colour pipeline tests depth after the shader.
    bool masked = false;
};

// What a scene is made of, as the shaders read it (scene/scene_packing.hpp builds it).
struct SceneGeometryData {
    std::vector<SceneGpuVertex> vertices;
    std::vector<std::uint32_t> indices;
    std::vector<SceneGpuInstance> instances;
    std::vector<SceneGpuMaterial> materials;
    std::vector<SceneGpuDraw> draws;  // opaque and masked first, then blended
};

}  // namespace vtpage::viewer
