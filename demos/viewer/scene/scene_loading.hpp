// --scene: a glTF file read in a child process (isolated_scene_reader.hpp), its images baked
// into the scene cache (scene_texture_cache.hpp) and handed to the streaming session as a
// SessionScene, whose geometry (scene_packing.hpp) samples each material slot's baked texture.
//
// Call it before the process starts threads of its own (the reader forks). SceneError (the
// viewer exits 2) for a scene or image that cannot be used.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "session_scene.hpp"

namespace vtpage::viewer {

// $XDG_CACHE_HOME/vtpage/scenes, else $HOME/.cache/vtpage/scenes, else .vtpage-scenes here.
std::filesystem::path default_scene_cache();

// use_material_stacks: whether the slots that agree are drawn as material stacks (scene_stacks.hpp)
// or each as a texture of its own.
std::shared_ptr<const SessionScene> load_session_scene(
    const std::filesystem::path& scene_file, const std::filesystem::path& cache_dir,
    const std::function<void(std::string_view line)>& progress, bool use_material_stacks = true);

}  // namespace vtpage::viewer
