#include "scene/scene_stacks.hpp"

#include <string>

namespace vtpage::viewer {

namespace {

bool same_transform(const UvTransform& a, const UvTransform& b) {
    return a.offset == b.offset && a.rotation == b.rotation && a.scale == b.scale;
}

// Whether two slots' textures may be layers of one stack.
bool agree(const TextureSlot& a, const StackFile& a_file, const TextureSlot& b,
           const StackFile& b_file) {
    return a_file.width == b_file.width && a_file.height == b_file.height && a.wrap_u == b.wrap_u &&
           a.wrap_v == b.wrap_v && same_transform(a.transform, b.transform);
}

// The material's slots that form its stack, in slot order: empty where fewer than two agree.
std::vector<std::size_t> stack_slots(const SceneMaterial& material,
                                     const std::array<std::int32_t, material_slot_count>& slots,
                                     const std::vector<StackFile>& files) {
    std::vector<std::size_t> best;
    for (std::size_t first = 0; first < stackable_slot_count; ++first) {
        const auto& lead = texture_slot(material, MaterialSlot(first));
        if (!lead || slots[first] < 0) continue;
        std::vector<std::size_t> group{first};
        for (std::size_t other = first + 1; other < stackable_slot_count; ++other) {
            const auto& candidate = texture_slot(material, MaterialSlot(other));
            if (!candidate || slots[other] < 0) continue;
            if (agree(*lead, files[std::size_t(slots[first])], *candidate,
                      files[std::size_t(slots[other])])) {
                group.push_back(other);
            }
        }
        if (group.size() > best.size()) best = std::move(group);
    }
    if (best.size() < 2) best.clear();
    return best;
}

}  // namespace

SceneStacks plan_stacks(
    const GltfScene& scene,
    const std::vector<std::array<std::int32_t, material_slot_count>>& material_slots,
    const std::vector<StackFile>& files) {
    if (material_slots.size() != scene.materials.size()) {
        throw SceneError("the scene has " + std::to_string(scene.materials.size()) +
                         " materials and " + std::to_string(material_slots.size()) +
                         " sets of textures were given");
    }
    for (const auto& slots : material_slots) {
        for (const std::int32_t index : slots) {
            if (index >= 0 && std::size_t(index) >= files.size()) {
                throw SceneError("a material slot names baked texture " + std::to_string(index) +
                                 " of " + std::to_string(files.size()));
            }
        }
    }
    SceneStacks out;
    out.materials.resize(scene.materials.size());
    for (std::size_t m = 0; m < scene.materials.size(); ++m) {
        const std::vector<std::size_t> slots =
            stack_slots(scene.materials[m], material_slots[m], files);
        if (slots.empty()) continue;
        std::vector<std::size_t> layers;
        layers.reserve(slots.size());
        for (const std::size_t slot : slots) layers.push_back(std::size_t(material_slots[m][slot]));
        std::size_t stack = 0;
        while (stack < out.stacks.size() && out.stacks[stack] != layers) ++stack;
        if (stack == out.stacks.size()) out.stacks.push_back(layers);
        MaterialStack& material = out.materials[m];
        material.stack = std::int32_t(stack);
        for (std::size_t l = 0; l < slots.size(); ++l) material.layers[slots[l]] = std::int32_t(l);
        out.stacked_slots += slots.size();
    }
    return out;
}

SceneStacks no_stacks(std::size_t materials) {
    SceneStacks none;
    none.materials.resize(materials);
    return none;
}

}  // namespace vtpage::viewer
