// The shaders' list of virtual textures: for each texture id (the id feedback entries carry),
// a VulkanTextureInfo with where its pages start and where each mip level's pages are. A small
// device-local buffer at device_address(); set() edits a CPU copy and record_upload() copies what
// changed in the next frame, ordered after earlier frames' reads like the indirection table.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

#include "vtpage/interop/vulkan_texture_info.hpp"

namespace vtpage {

class VulkanContext;

struct VulkanTextureDirectorySettings {
    std::uint32_t max_textures = 256;
};

class VulkanTextureDirectory {
public:
    explicit VulkanTextureDirectory(VulkanContext& context,
                                    VulkanTextureDirectorySettings settings = {});
    ~VulkanTextureDirectory();
    VulkanTextureDirectory(const VulkanTextureDirectory&) = delete;
    VulkanTextureDirectory& operator=(const VulkanTextureDirectory&) = delete;

    VkDeviceAddress device_address() const noexcept;
    std::uint32_t max_textures() const noexcept;

    // Describes texture `id`: its shape (vt::TextureShape), its first page at global page
    // base_page, how it is sampled (TileSource::sampling()). out_of_range for an id >=
    // max_textures or a shape that is not valid(); invalid_argument for an unknown address mode
    // or colour space, or sRGB in a format that has no sRGB variant (vt::srgb_allowed).
    void set(std::uint32_t id, std::uint32_t base_page, vt::TextureShape shape,
             vt::TextureSampling sampling = {});
    // The same for a square RGBA8 texture 2^size_log2 texels on a side.
    void set(std::uint32_t id, std::uint32_t base_page, std::uint32_t size_log2);
    VulkanTextureInfo get(std::uint32_t id) const;

    // Copies what changed since the last upload (thread-safe with set()).
    void record_upload(VkCommandBuffer commands);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage
