// Fuzzes the bytes a scene crosses back in from the process that read it (scene_wire.hpp): what
// the viewer decodes there may come from a reader that assimp's bugs took over, so decoding must
// give a scene that check_scene accepts, whose references all hold, or throw SceneError; nothing
// else, no crash, no leak, no allocation past what the bytes and the limits allow. A scene that
// decodes encodes to bytes that decode to it again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "scene/scene_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vtpage::viewer;
    GltfSceneLimits limits;
    limits.max_vertices = 1 << 16;
    limits.max_triangles = 1 << 16;
    limits.max_instances = 1 << 12;
    limits.max_materials = 1 << 10;
    limits.max_images = 1 << 10;
    try {
        const GltfScene scene = decode_scene(std::span(data, size), limits, "fuzzed");
        for (const SceneMesh& mesh : scene.meshes) {
            if (mesh.material >= scene.materials.size()) std::abort();
            for (std::uint32_t index : mesh.indices) {
                if (index >= mesh.positions.size()) std::abort();
            }
        }
        for (const SceneInstance& instance : scene.instances) {
            if (instance.mesh >= scene.meshes.size()) std::abort();
        }
        const std::vector<std::uint8_t> again = encode_scene(scene);
        const GltfScene round_trip = decode_scene(again, limits, "again");
        if (encode_scene(round_trip) != again) std::abort();
    } catch (const SceneError&) {}
    return 0;
}
