// Fuzzes the viewer's glTF scene loader (demos/viewer/scene/gltf_scene.cpp) from memory: a .glb
// where the bytes start with its magic, a .gltf otherwise. Loading must give a scene whose
// references all hold (indices inside their mesh, materials and images that exist) or throw
// SceneError; nothing else, no crash, no leak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "scene/gltf_scene.hpp"
#include "scene_references.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vtpage::viewer;
    const bool binary = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
    GltfSceneLimits limits;
    limits.max_file_bytes = 1 << 20;
    limits.max_vertices = 1 << 16;
    limits.max_triangles = 1 << 16;
    limits.max_instances = 1 << 12;
    try {
        vtpage::fuzz::abort_unless_references_hold(
            load_gltf_scene_from_memory(data, size, binary ? "glb" : "gltf", limits));
    } catch (const SceneError&) {}
    return 0;
}
