// A mesh scene as the streaming session takes it: the baked textures to stream, in order, the
// material stacks made of them (scene/scene_stacks.hpp), and the geometry that samples them once
// their texture ids are known. Made from a glTF file by
// scene/scene_loading.hpp (assimp and libvips); the session itself needs neither.
#pragma once

#include <cstddef>
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
    // Material stacks, each its layers as indices into texture_files: added after the files,
    // each as one vt::StackSource of the files' sources.
    std::vector<std::vector<std::size_t>> stacks;
    std::size_t stacked_slots = 0;  // material slots drawn through a stack, all materials
    // The most textures one material's feedback turns over (its stack counting once): a pixel
    // asks for each of them within that many frames.
    std::size_t feedback_units = scene_slot_count;
    SceneBox box;  // world-space bounds: the scene paths frame them
    // The geometry, given the texture id each file got, then each stack's (the order of
    // texture_files, then of stacks).
    std::function<SceneGeometryData(const std::vector<vt::TextureId>&)> geometry;
};

}  // namespace vtpage::viewer
