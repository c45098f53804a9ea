// The hardware reference (--reference-textures): a scene's textures as ordinary sampled images,
// every level resident in the same formats as the baked tiles (decoded by the device), each with
// a VkSampler of its address modes and the renderer's anisotropy. One descriptor set binds them
// all as an array of combined image samplers indexed by texture id (binding 0 of set 1, sized by
// specialization constant 0); the scene's reference pipelines sample it where the vtpage ones
// sample virtual textures.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "renderer/reference_texture.hpp"
#include "vtpage/interop/vulkan_handle.hpp"
#include "vtpage/interop/vulkan_sampler_set.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

class VulkanReferenceTextures {
public:
    // textures[id]: the texture of that id. max_anisotropy 1: none; above 1 it needs the device's
    // samplerAnisotropy (VulkanContext::supports_sampler_anisotropy) and is clamped to its limit.
    // invalid_argument for no textures or a texture without levels.
    VulkanReferenceTextures(VulkanContext& context, const std::vector<ReferenceTexture>& textures,
                            float max_anisotropy);

    VkDescriptorSetLayout set_layout() const noexcept { return set_->layout(); }
    VkDescriptorSet set() const noexcept { return set_->get(); }
    std::uint32_t count() const noexcept { return std::uint32_t(images_.size()); }
    std::uint64_t bytes() const noexcept { return bytes_; }  // device memory of the images

private:
    struct Image {
        UniqueVkDeviceMemory memory;  // members go in reverse: sampler, view, image, memory
        UniqueVkImage image;
        UniqueVkImageView view;
        UniqueVkSampler sampler;
    };
    void make_image(const ReferenceTexture& texture, Image& image);
    void upload(const std::vector<ReferenceTexture>& textures);
    void make_sampler(const ReferenceTexture& texture, float max_anisotropy, Image& image);
    void make_set();

    VulkanContext& context_;
    std::vector<Image> images_;
    std::optional<VulkanSamplerSet> set_;  // made last, of every image
    std::uint64_t bytes_ = 0;
};

}  // namespace vtpage::viewer
