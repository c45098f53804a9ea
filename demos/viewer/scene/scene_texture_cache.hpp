// A glTF scene's images baked into virtual textures (tools/bake), kept in a cache folder so that
// the next run of the same scene opens them instead of baking them again.
//
// Each material slot's texture is baked in the format its contents want: base colour bc1 (bc3
// where the material blends or masks by alpha), normal bc5 (x, y), metallic-roughness bc1 (glTF
// keeps roughness in G, metallic in B), occlusion bc4 (R), emissive bc1; sRGB where the slot
// holds colour, and the slot's wrap modes baked into the tiles' borders. One image used with the
// same format and sampling by several slots is baked once.
//
// A cached file is named by a hash of what it was baked from (the hash of the image's bytes,
// from its file or embedded, the format, the sampling and the encoding quality), so that a copy
// of the scene elsewhere finds it too, and is reused where it opens as a baked texture of that
// format and sampling and is not older than its image file. Otherwise it is baked again, into a
// file of its own renamed over the cached one, so that a bake that fails or is cut short leaves
// nothing in the cache's place.
//
// The bake itself is the settings' baker's (scene_image_baker.hpp): in this process through
// libvips, or by the vtpage-bake program in a process of its own, so that a program that only
// opens cached textures (the viewer on a machine without libvips) needs no image libraries.
//
// Errors: SceneError naming the scene, the material, the slot and the image for an image that
// is missing, cannot be read, is not an image libvips reads, or is past the bake's limits;
// vtpage::Error: invalid_argument where no cache folder or no baker is given, io_error for a
// cache folder or file that cannot be written, and what the baker throws otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "block_codec.hpp"
#include "scene/gltf_scene.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"
#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::viewer {

// The tile format a slot's texture is baked in (see above).
vt::TileFormat slot_format(const SceneMaterial& material, MaterialSlot slot);
// The slot's wrap modes, and sRGB where it holds colour and the format has sRGB.
vt::TextureSampling slot_sampling(const TextureSlot& texture, vt::TileFormat format);

// One image to bake into `output` (a file of the cache's, renamed into place once baked).
struct SceneImageBake {
    const SceneImage* image = nullptr;  // the scene's image: its embedded bytes, its name
    std::filesystem::path image_file;   // its file, canonical; empty when embedded
    std::filesystem::path output;
    vt::TileFormat format = vt::TileFormat::bc1;
    vt::TextureSampling sampling;  // recorded, and baked into the tiles' borders and levels
    bake::EncodeQuality quality = bake::EncodeQuality::fast;
    unsigned threads = 0;
    std::uint64_t max_memory_bytes = std::uint64_t{1} << 30;
};

// What a baker throws for an image that cannot be baked (missing, unreadable, not an image,
// past the limits), saying why: the cache names the material, the slot and the image with it.
class SceneImageRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

using SceneImageBaker = std::function<void(const SceneImageBake& bake)>;

struct SceneTextureSettings {
    std::filesystem::path cache_dir;  // created if missing
    // Told one line per texture, baked or reused.
    std::function<void(std::string_view line)> progress;
    unsigned threads = 0;  // encoding threads of each bake; 0: one per core
    // Images baked at once, each by a worker of its own (the baker is then called from several
    // threads, and progress too, one line at a time): the bake tool's processes keep more cores
    // busy than one bake, whose image decode is serial.
    unsigned bakes_at_once = 1;
    // The most memory one bake may need (the baker's limit, checked from the image's header).
    std::uint64_t max_memory_bytes = std::uint64_t{1} << 30;
    // Part of the cache's key: a file baked at another quality is baked again.
    bake::EncodeQuality quality = bake::EncodeQuality::fast;
    // Bakes what the cache lacks (scene_image_baker.hpp); needed unless every file is cached.
    SceneImageBaker baker;
};

// One baked file: one image in one format and sampling.
struct SceneTexture {
    std::filesystem::path file;  // the baked texture in the cache
    std::uint32_t image = 0;     // into GltfScene::images
    vt::TileFormat format = vt::TileFormat::bc1;
    vt::TextureSampling sampling;
    bool baked_now = false;               // false: reused from the cache
    std::uint32_t width = 0, height = 0;  // of the baked texture
};

struct SceneTextures {
    std::vector<SceneTexture> textures;
    // Per material, per MaterialSlot: an index into textures, or -1 where the material has no
    // texture in that slot.
    std::vector<std::array<std::int32_t, material_slot_count>> material_slots;
};

// Bakes what the cache lacks of the scene's textures and returns every one. scene_file is the
// scene's path, for messages.
SceneTextures bake_scene_textures(const GltfScene& scene, const std::filesystem::path& scene_file,
                                  const SceneTextureSettings& settings);

}  // namespace vtpage::viewer
