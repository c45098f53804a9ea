// A GltfScene as bytes, to hand it from the process that read it to the one that draws it
// (isolated_scene_reader.hpp). The reading side treats the bytes as untrusted: every count is
// checked against what is left and against GltfSceneLimits before anything is allocated, and the
// scene is checked as a file's would be (check_scene).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scene/gltf_scene.hpp"

namespace vtpage::viewer {

std::vector<std::uint8_t> encode_scene(const GltfScene& scene);
// SceneError naming `name` when the bytes are not a scene within the limits.
GltfScene decode_scene(std::span<const std::uint8_t> bytes, const GltfSceneLimits& limits,
                       const std::string& name);

// What load_gltf_scene guarantees of what it returns, checked again: references that exist,
// indices inside their mesh, finite values, enumerations in range, counts within the limits.
void check_scene(const GltfScene& scene, const GltfSceneLimits& limits, const std::string& name);

}  // namespace vtpage::viewer
