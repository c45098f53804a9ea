// A mesh scene as the streaming session takes it: the baked textures to stream, in order, and
// the geometry that samples them once their texture ids are known. Made from a glTF file by
// scene/scene_loading.hpp (assimp and libvips); the session itself needs neither.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "camera.hpp"
#include "renderer/scene_gpu_layout.hpp"
#include "vtpage/streaming/sources/texture_set.hpp"

namespace vtpage::viewer {

struct SessionScene {
    std::string name;                        // the scene's file, for messages and the HUD
    std::vector<std::string> texture_files;  // baked textures, added to the streaming in order
    SceneBox box;                            // world-space bounds: the scene paths frame them
    // The geometry, given the texture id each file got (the same order as texture_files).
    std::function<SceneGeometryData(const std::vector<vt::TextureId>&)> geometry;
};

}  // namespace vtpage::viewer
