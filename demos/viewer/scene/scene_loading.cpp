#include "scene/scene_loading.hpp"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "scene/isolated_scene_reader.hpp"
#include "scene/scene_image_baker.hpp"
#include "scene/scene_packing.hpp"
#include "scene/scene_stacks.hpp"
#include "scene/scene_texture_cache.hpp"

namespace vtpage::viewer {

namespace {

SceneBox box_of(const GltfScene& scene) {
    SceneBox box;
    for (int i = 0; i < 3; ++i) {
        box.min[i] = scene.bounds_min[i];
        box.max[i] = scene.bounds_max[i];
    }
    return box;
}

// Per material, the texture ids of its slots, given the id each baked texture got.
std::vector<MaterialTextures> material_textures(const SceneTextures& baked,
                                                const std::vector<vt::TextureId>& ids) {
    std::vector<MaterialTextures> textures;
    for (const auto& slots : baked.material_slots) {
        MaterialTextures material;
        for (std::size_t slot = 0; slot < scene_slot_count; ++slot) {
            const std::int32_t index = slots[slot];
            material[slot] = index < 0 ? scene_no_texture : ids.at(std::size_t(index));
        }
        textures.push_back(material);
    }
    return textures;
}

// Per material, its stack's texture id and each slot's layer, given the ids of the baked
// textures and then of the stacks.
std::vector<MaterialStackTexture> material_stacks(const SceneStacks& stacks,
                                                  std::size_t texture_count,
                                                  const std::vector<vt::TextureId>& ids) {
    std::vector<MaterialStackTexture> out;
    for (const MaterialStack& material : stacks.materials) {
        MaterialStackTexture& stack = out.emplace_back();
        if (material.stack < 0) continue;
        stack.texture = ids.at(texture_count + std::size_t(material.stack));
        stack.layers = material.layers;
    }
    return out;
}

// The most textures a material's feedback turns over: its stack once, and each slot with a
// texture that is not one of its layers.
std::size_t feedback_units(const SceneTextures& baked, const SceneStacks& stacks) {
    std::size_t most = 1;
    for (std::size_t m = 0; m < baked.material_slots.size(); ++m) {
        const MaterialStack& stack = stacks.materials[m];
        std::size_t units = stack.stack >= 0 ? 1 : 0;
        for (std::size_t slot = 0; slot < material_slot_count; ++slot) {
            units += baked.material_slots[m][slot] >= 0 && stack.layers[slot] < 0;
        }
        most = std::max(most, units);
    }
    return most;
}

}  // namespace

std::filesystem::path default_scene_cache() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in the viewer changes its environment
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
        return std::filesystem::path(xdg) / "vtpage" / "scenes";
    }
    // NOLINTNEXTLINE(concurrency-mt-unsafe): as above
    if (const char* home = std::getenv("HOME"); home && *home == '/') {
        return std::filesystem::path(home) / ".cache" / "vtpage" / "scenes";
    }
    return ".vtpage-scenes";
}

std::shared_ptr<const SessionScene> load_session_scene(
    const std::filesystem::path& scene_file, const std::filesystem::path& cache_dir,
    const std::function<void(std::string_view line)>& progress, bool use_material_stacks) {
    auto scene = std::make_shared<const GltfScene>(read_gltf_scene_isolated(scene_file));
    SceneTextureSettings settings;
    settings.cache_dir = cache_dir;
    settings.progress = progress;
    // A bake's decode is serial and its encode threaded: a few bakes at once, sharing the cores,
    // keep them busy on a scene of many images.
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    settings.bakes_at_once = std::clamp(cores / 4, 1U, 8U);
    settings.threads = std::max(1U, cores / settings.bakes_at_once);
    // Found only when an image must be baked: cached textures open without it.
    settings.baker = [](const SceneImageBake& job) {
        const std::filesystem::path tool = find_bake_tool();
        if (tool.empty()) {
            throw SceneImageRefused(
                "it is not in the scene cache, and vtpage-bake, which bakes it, is neither "
                "beside the viewer nor in its build tree");
        }
        bake_tool_baker(tool)(job);
    };
    auto baked =
        std::make_shared<const SceneTextures>(bake_scene_textures(*scene, scene_file, settings));
    std::vector<StackFile> sizes;
    for (const SceneTexture& texture : baked->textures)
        sizes.push_back({texture.width, texture.height});
    auto stacks = std::make_shared<const SceneStacks>(
        use_material_stacks ? plan_stacks(*scene, baked->material_slots, sizes)
                            : no_stacks(baked->material_slots.size()));
    auto session_scene = std::make_shared<SessionScene>();
    session_scene->name = scene_file.filename().string();
    for (const SceneTexture& texture : baked->textures) {
        session_scene->texture_files.push_back(texture.file.string());
    }
    session_scene->stacks = stacks->stacks;
    session_scene->stacked_slots = stacks->stacked_slots;
    session_scene->feedback_units = feedback_units(*baked, *stacks);
    session_scene->box = box_of(*scene);
    session_scene->geometry = [scene, baked, stacks](const std::vector<vt::TextureId>& ids) {
        return pack_scene(*scene, material_textures(*baked, ids),
                          material_stacks(*stacks, baked->textures.size(), ids));
    };
    return session_scene;
}

}  // namespace vtpage::viewer
