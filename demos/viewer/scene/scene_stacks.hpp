// Which of a scene's material slots are drawn through one material stack (vt::StackSource): per
// material, the slots base colour, normal, metallic-roughness and occlusion whose baked textures
// have the same width and height and whose slots have the same wrap modes and the same
// KHR_texture_transform (compared exactly; the scene has one uv set) become the layers of one
// stack, in slot order. Where a material's slots fall into several such groups, the largest
// forms the stack (on a tie, the one with the earliest slot); the others stay textures of their
// own, as does every slot of a material with fewer than two that agree, and the emissive slot
// always. Materials whose stacks would hold the same files in the same order share one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scene/gltf_scene.hpp"

namespace vtpage::viewer {

// The slots a stack may take: base colour, normal, metallic-roughness, occlusion.
inline constexpr std::size_t stackable_slot_count = 4;

// A baked texture's size, as far as stacking goes.
struct StackFile {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
};

struct MaterialStack {
    std::int32_t stack = -1;  // into SceneStacks::stacks, or -1
    // Per MaterialSlot: the slot's layer in the stack, or -1 where it is not one of its layers.
    std::array<std::int32_t, material_slot_count> layers{-1, -1, -1, -1, -1};
};

struct SceneStacks {
    // Each stack's layers as indices into the baked files, in layer (slot) order.
    std::vector<std::vector<std::size_t>> stacks;
    std::vector<MaterialStack> materials;  // one per material
    std::size_t stacked_slots = 0;         // material slots drawn through a stack, all materials
};

// material_slots: per material, per MaterialSlot, the index of its baked file (-1 where none),
// as SceneTextures::material_slots; files: each baked file's size. SceneError where an index
// lies outside files or there is not one entry per material.
SceneStacks plan_stacks(
    const GltfScene& scene,
    const std::vector<std::array<std::int32_t, material_slot_count>>& material_slots,
    const std::vector<StackFile>& files);

// The plan without stacks: every slot a texture of its own (--material-stacks off).
SceneStacks no_stacks(std::size_t materials);

}  // namespace vtpage::viewer
