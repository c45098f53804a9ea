#include "scene/scene_packing.hpp"

#include <cmath>
#include <cstring>
#include <string>

namespace vtpage::viewer {

namespace {

void pack_stack(const SceneMaterial& material, const MaterialStackTexture& stack,
                SceneGpuMaterial& packed) {
    if (stack.texture == scene_no_texture) return;
    bool first = true;
    for (std::uint32_t slot = 0; slot < scene_slot_count; ++slot) {
        const std::int32_t layer = stack.layers[slot];
        if (layer < 0) continue;
        if (layer >= 4 || !texture_slot(material, MaterialSlot(slot))) {
            throw SceneError("material \"" + material.name + "\": its " +
                             to_string(MaterialSlot(slot)) + " slot cannot be stack layer " +
                             std::to_string(layer));
        }
        packed.stack_layers[slot] = std::uint32_t(layer);
        if (layer == 0 || first) packed.stack_slot = slot;
        first = false;
    }
    if (first) return;  // no slot is a layer of it: not drawn through it
    packed.stack = stack.texture;
}

SceneGpuMaterial pack_material(const SceneMaterial& material, const MaterialTextures& textures) {
    SceneGpuMaterial packed;
    std::memcpy(packed.base_colour, &material.base_colour[0], sizeof(packed.base_colour));
    for (int i = 0; i < 3; ++i) packed.emissive_metallic[i] = material.emissive[i];
    packed.emissive_metallic[3] = material.metallic;
    packed.roughness_cutoff[0] = material.roughness;
    packed.roughness_cutoff[1] = material.alpha_cutoff;
    packed.alpha_mode = static_cast<std::uint32_t>(material.alpha_mode);
    packed.double_sided = material.double_sided ? 1u : 0u;
    for (std::uint32_t slot = 0; slot < scene_slot_count; ++slot) {
        const auto& given = texture_slot(material, MaterialSlot(slot));
        packed.textures[slot] = given ? textures[slot] : scene_no_texture;
        if (given) {
            const std::size_t row = std::size_t(slot) * 2;
            transform_rows(given->transform, packed.transforms[row], packed.transforms[row + 1]);
        }
    }
    return packed;
}

SceneGpuInstance pack_instance(const SceneInstance& instance, std::uint32_t material) {
    SceneGpuInstance packed;
    std::memcpy(packed.world, &instance.world[0][0], sizeof(packed.world));
    const glm::mat4 normal(glm::transpose(glm::inverse(glm::mat3(instance.world))));
    std::memcpy(packed.normal, &normal[0][0], sizeof(packed.normal));
    packed.material = material;
    return packed;
}

struct MeshRange {
    std::uint32_t first_index = 0;
    std::uint32_t index_count = 0;
    std::int32_t vertex_offset = 0;
};

std::vector<MeshRange> pack_meshes(const GltfScene& scene, SceneGeometryData& data) {
    std::vector<MeshRange> ranges;
    for (const SceneMesh& mesh : scene.meshes) {
        ranges.push_back({std::uint32_t(data.indices.size()), std::uint32_t(mesh.indices.size()),
                          std::int32_t(data.vertices.size())});
        for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
            const glm::vec3& p = mesh.positions[v];
            const glm::vec3& n = mesh.normals[v];
            const glm::vec2& uv = mesh.uvs[v];
            data.vertices.push_back({{p.x, p.y, p.z}, uv.x, {n.x, n.y, n.z}, uv.y});
        }
        data.indices.insert(data.indices.end(), mesh.indices.begin(), mesh.indices.end());
    }
    return ranges;
}

}  // namespace

void transform_rows(const UvTransform& transform, float row0[4], float row1[4]) {
    // uv' = offset + rotate(scale * uv), as UvTransform::apply computes it.
    const float c = std::cos(transform.rotation), s = std::sin(transform.rotation);
    row0[0] = c * transform.scale.x;
    row0[1] = s * transform.scale.y;
    row0[2] = transform.offset.x;
    row0[3] = 0;
    row1[0] = -s * transform.scale.x;
    row1[1] = c * transform.scale.y;
    row1[2] = transform.offset.y;
    row1[3] = 0;
}

SceneGeometryData pack_scene(const GltfScene& scene, const std::vector<MaterialTextures>& textures,
                             const std::vector<MaterialStackTexture>& stacks) {
    if (textures.size() != scene.materials.size()) {
        throw SceneError("the scene has " + std::to_string(scene.materials.size()) +
                         " materials and " + std::to_string(textures.size()) +
                         " sets of textures were given");
    }
    if (!stacks.empty() && stacks.size() != scene.materials.size()) {
        throw SceneError("the scene has " + std::to_string(scene.materials.size()) +
                         " materials and " + std::to_string(stacks.size()) +
                         " material stacks were given");
    }
    SceneGeometryData data;
    for (std::size_t m = 0; m < scene.materials.size(); ++m) {
        data.materials.push_back(pack_material(scene.materials[m], textures[m]));
        if (!stacks.empty()) pack_stack(scene.materials[m], stacks[m], data.materials.back());
    }
    const std::vector<MeshRange> ranges = pack_meshes(scene, data);
    std::vector<SceneGpuDraw> blended;
    for (const SceneInstance& instance : scene.instances) {
        const SceneMesh& mesh = scene.meshes[instance.mesh];
        const MeshRange& range = ranges[instance.mesh];
        if (range.index_count == 0) continue;
        const auto index = std::uint32_t(data.instances.size());
        data.instances.push_back(pack_instance(instance, mesh.material));
        const bool blend = scene.materials[mesh.material].alpha_mode == AlphaMode::blend;
        const SceneGpuDraw draw{range.first_index, range.index_count, range.vertex_offset, index,
                                blend};
        (blend ? blended : data.draws).push_back(draw);
    }
    data.draws.insert(data.draws.end(), blended.begin(), blended.end());
    return data;
}

}  // namespace vtpage::viewer
