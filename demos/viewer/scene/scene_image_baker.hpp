// The two ways a scene's image is baked for the texture cache (SceneTextureSettings::baker):
//
//   in_process_baker()      libvips and the baker in this process (vtpage_viewer_scene_bake,
//                           which links libvips): the texture cache's tests
//   bake_tool_baker(tool)   the vtpage-bake program run for each image: libvips decodes the
//                           untrusted image in a process of its own (a crash, a hang or a memory
//                           bomb ends that process, not the caller), and the caller needs no
//                           image libraries: the viewer
//
// Both throw SceneImageRefused for an image that cannot be baked, saying why.
#pragma once

#include <chrono>
#include <filesystem>

#include "scene/scene_texture_cache.hpp"

namespace vtpage::viewer {

SceneImageBaker in_process_baker();

// `deadline`: how long one image may take before its bake is killed (an io_error then).
SceneImageBaker bake_tool_baker(std::filesystem::path tool,
                                std::chrono::milliseconds deadline = std::chrono::minutes(10));

// vtpage-bake beside the running program (installed) or in the build tree (from demos/viewer);
// empty when neither is there.
std::filesystem::path find_bake_tool();

}  // namespace vtpage::viewer
