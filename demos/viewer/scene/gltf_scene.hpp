// A glTF 2.0 scene (.gltf, .glb, or .gltf with embedded buffers) read with assimp into what the
// viewer draws: triangle meshes with positions, normals and one uv set; each mesh's instances with
// their world transforms (the node hierarchy flattened); materials with their texture slots, each
// slot's image, sampler wrap modes, KHR_texture_transform and colour space.
//
// The file is untrusted: everything assimp hands back is checked (indices inside their mesh,
// finite positions and transforms, material and image references that exist, counts under
// GltfSceneLimits) and anything wrong is a SceneError naming the problem, never a crash.
#pragma once

#include <glm/glm.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtpage::viewer {

// A scene file that cannot be used (the viewer exits with 2, saying why).
class SceneError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// As Vulkan's VkSamplerAddressMode (glTF's wrapS / wrapT).
enum class AddressMode : std::uint8_t { repeat, mirrored_repeat, clamp_to_edge };
const char* to_string(AddressMode mode);

// KHR_texture_transform: uv' = translate(offset) * rotate(rotation) * scale(scale) * uv.
struct UvTransform {
    glm::vec2 offset{0.0f};
    float rotation = 0.0f;  // radians, counter-clockwise in uv space
    glm::vec2 scale{1.0f};
    glm::vec2 apply(glm::vec2 uv) const;
    bool identity() const {
        return offset == glm::vec2(0.0f) && rotation == 0.0f && scale == glm::vec2(1.0f);
    }
};

// Where an image comes from: a file beside the scene, or bytes embedded in it (a .glb's buffer
// or a data URI), named by the scene's path and index.
struct SceneImage {
    std::filesystem::path path;          // empty when embedded
    std::vector<std::uint8_t> embedded;  // the encoded image (PNG, JPEG, ...)
    std::string format_hint;             // assimp's, e.g. "png" or "jpg" (embedded only)
    std::string name;                    // for messages and cache names
};

// One texture slot of a material.
struct TextureSlot {
    std::uint32_t image = 0;  // into GltfScene::images
    AddressMode wrap_u = AddressMode::repeat;
    AddressMode wrap_v = AddressMode::repeat;
    UvTransform transform;
    bool srgb = false;  // base colour and emissive: sRGB, whatever the file says; others linear
};

enum class AlphaMode : std::uint8_t { opaque, mask, blend };
const char* to_string(AlphaMode mode);

struct SceneMaterial {
    std::string name;
    glm::vec4 base_colour{1.0f};
    glm::vec3 emissive{0.0f};
    float metallic = 1.0f;
    float roughness = 1.0f;
    AlphaMode alpha_mode = AlphaMode::opaque;
    float alpha_cutoff = 0.5f;
    bool double_sided = false;
    std::optional<TextureSlot> base_colour_texture;
    std::optional<TextureSlot> normal_texture;
    std::optional<TextureSlot> metallic_roughness_texture;
    std::optional<TextureSlot> occlusion_texture;
    std::optional<TextureSlot> emissive_texture;
};

// A material's texture slots, in the order the viewer's shaders index them.
enum class MaterialSlot : std::uint8_t {
    base_colour,
    normal,
    metallic_roughness,
    occlusion,
    emissive
};
inline constexpr std::size_t material_slot_count = 5;
// "base colour", "normal", "metallic-roughness", "occlusion", "emissive".
const char* to_string(MaterialSlot slot);

// The material's texture in that slot, if it has one.
const std::optional<TextureSlot>& texture_slot(const SceneMaterial& material, MaterialSlot slot);

struct SceneMesh {
    std::string name;
    std::vector<glm::vec3> positions;
    std::vector<glm::vec3> normals;      // as many as positions (made flat where the file has none)
    std::vector<glm::vec2> uvs;          // as many as positions; zero where the file has none
    std::vector<std::uint32_t> indices;  // triangles, each index < positions.size()
    std::uint32_t material = 0;          // into GltfScene::materials
};

struct SceneInstance {
    std::uint32_t mesh = 0;
    glm::mat4 world{1.0f};
};

struct GltfScene {
    std::vector<SceneMesh> meshes;
    std::vector<SceneInstance> instances;
    std::vector<SceneMaterial> materials;
    std::vector<SceneImage> images;
    // The world-space bounds of every instance's vertices (empty scenes are refused).
    glm::vec3 bounds_min{0.0f};
    glm::vec3 bounds_max{0.0f};
};

// What a scene may hold at most: beyond these it is refused before it can exhaust memory.
struct GltfSceneLimits {
    std::uint64_t max_file_bytes = std::uint64_t{1} << 30;
    std::size_t max_vertices = std::size_t{1} << 26;  // all meshes together
    std::size_t max_triangles = std::size_t{1} << 26;
    std::size_t max_instances = std::size_t{1} << 20;
    std::size_t max_node_depth = 256;
    std::size_t max_materials = 1u << 16;
    std::size_t max_images = 1u << 14;
};

// Reads and checks a scene; SceneError with the path and the problem otherwise.
GltfScene load_gltf_scene(const std::filesystem::path& path, const GltfSceneLimits& limits = {});

// The same from bytes in memory (`hint` is the file's extension: "gltf" or "glb"): what the fuzz
// target drives. Relative image and buffer paths cannot be resolved from memory.
GltfScene load_gltf_scene_from_memory(const void* bytes, std::size_t size, const char* hint,
                                      const GltfSceneLimits& limits = {});

}  // namespace vtpage::viewer
