// Reads a glTF scene in a child process, so that what assimp does with a hostile file (crash,
// hang, a memory bomb) ends that process and becomes a SceneError here. The child runs under an
// address-space limit and a CPU-time limit; the parent waits at most `deadline`, then kills it.
// The child's bytes are decoded as untrusted (scene_wire.hpp).
//
// It forks without exec: call it before the process starts threads of its own (the viewer reads
// its scene before it makes a window, a device or a streamer).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "scene/gltf_scene.hpp"

namespace vtpage::viewer {

struct IsolatedReadSettings {
    GltfSceneLimits limits;
    std::chrono::milliseconds deadline{60'000};
    // The child's address space (under a sanitizer: beyond what the sanitizer has mapped).
    std::uint64_t memory_bytes = std::uint64_t{8} << 30;
};

GltfScene read_gltf_scene_isolated(const std::filesystem::path& path,
                                   const IsolatedReadSettings& settings = {});

}  // namespace vtpage::viewer
