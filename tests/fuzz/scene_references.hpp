// The fuzz targets' own check of a scene the loader returned, kept apart from the loader's
// (check_scene in scene_wire.hpp) so that it can catch the loader: indices inside their mesh,
// and meshes, materials and images that exist. A scene that breaks one aborts the run.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "scene/gltf_scene.hpp"

namespace vtpage::fuzz {

inline void abort_unless_references_hold(const viewer::GltfScene& scene) {
    using namespace viewer;
    for (const SceneMesh& mesh : scene.meshes) {
        if (mesh.material >= scene.materials.size()) std::abort();
        for (std::uint32_t index : mesh.indices) {
            if (index >= mesh.positions.size()) std::abort();
        }
    }
    for (const SceneInstance& instance : scene.instances) {
        if (instance.mesh >= scene.meshes.size()) std::abort();
    }
    for (const SceneMaterial& material : scene.materials) {
        for (const auto* slot : {&material.base_colour_texture, &material.normal_texture,
                                 &material.metallic_roughness_texture, &material.occlusion_texture,
                                 &material.emissive_texture}) {
            if (*slot && (*slot)->image >= scene.images.size()) std::abort();
        }
    }
}

}  // namespace vtpage::fuzz
