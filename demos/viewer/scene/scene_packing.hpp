// A glTF scene (gltf_scene.hpp) turned into what the mesh pipelines read
// (renderer/scene_gpu_layout.hpp): every mesh's vertices and indices one after another, an
// instance record per placed mesh (world and normal transforms, material), a material record
// per material (factors, each slot's virtual texture and uv transform, the material stack and each
// slot's layer in it) and one draw per instance, opaque and masked ones first, blended ones last.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "renderer/scene_gpu_layout.hpp"
#include "scene/gltf_scene.hpp"

namespace vtpage::viewer {

// Per material, per MaterialSlot: the virtual texture it samples, or scene_no_texture.
static_assert(material_slot_count == scene_slot_count, "the shaders' slots are the scene's");
using MaterialTextures = std::array<std::uint32_t, scene_slot_count>;

// Per material, the material stack some of its slots are drawn through (scene_stacks.hpp).
struct MaterialStackTexture {
    std::uint32_t texture = scene_no_texture;  // the stack's virtual texture
    // Per MaterialSlot: its layer in the stack, or -1 where it is not one of its layers.
    std::array<std::int32_t, scene_slot_count> layers{-1, -1, -1, -1, -1};
};

// A KHR_texture_transform as the two rows the shaders apply (scene_frame.glsl).
void transform_rows(const UvTransform& transform, float row0[4], float row1[4]);

// SceneError when `textures` does not have one entry per material, or `stacks` is neither empty
// (no stacks) nor one entry per material, or a stack's layer is not below 4 or is given for a
// slot the material has no texture in.
SceneGeometryData pack_scene(const GltfScene& scene, const std::vector<MaterialTextures>& textures,
                             const std::vector<MaterialStackTexture>& stacks = {});

}  // namespace vtpage::viewer
