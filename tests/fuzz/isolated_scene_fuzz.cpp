// Fuzzes the viewer's glTF scene loading as the viewer runs it (demos/viewer/scene/
// isolated_scene_reader.hpp): the input written as a scene file (.glb where it starts with the
// magic, .gltf otherwise), read by assimp in a child process, the child's reply decoded here.
// Whatever assimp does in the child (a crash, a hang, a memory bomb) must come back as a
// SceneError; a scene that comes back must hold its references. libFuzzer sees the coverage of
// this process only: the child's is lost with it, so assimp is driven by mutation, not guided.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "fuzz_files.hpp"
#include "scene/isolated_scene_reader.hpp"
#include "scene_references.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vtpage::viewer;
    static const std::filesystem::path folder = vtpage::fuzz::own_folder("isolated_scene");
    const bool binary = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
    const std::filesystem::path file = folder / (binary ? "scene.glb" : "scene.gltf");
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
        if (!out) std::abort();
    }
    IsolatedReadSettings settings;
    settings.limits.max_file_bytes = 1 << 20;
    settings.limits.max_vertices = 1 << 16;
    settings.limits.max_triangles = 1 << 16;
    settings.limits.max_instances = 1 << 12;
    settings.deadline = std::chrono::milliseconds(5000);
    settings.memory_bytes = std::uint64_t{1} << 30;
    try {
        vtpage::fuzz::abort_unless_references_hold(read_gltf_scene_isolated(file, settings));
    } catch (const SceneError&) {}
    return 0;
}
