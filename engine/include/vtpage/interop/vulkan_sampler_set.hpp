// A descriptor set of one binding that holds combined image samplers (an array where there are
// several), with its own layout and pool: how a few sampled images reach a shader.
//
//   VulkanSamplerSet set(context, 0, images, VK_SHADER_STAGE_FRAGMENT_BIT, "my textures");
//   vkCmdBindDescriptorSets(commands, bind_point, layout, 0, 1, &set_handle, 0, nullptr);
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

class VulkanSamplerSet {
public:
    // `images[i]` is element i of the binding; each must outlive the set's use. `name` names
    // the object in errors. Errc::invalid_argument for no images.
    VulkanSamplerSet(VulkanContext& context, std::uint32_t binding,
                     std::span<const VkDescriptorImageInfo> images, VkShaderStageFlags stages,
                     const char* name);

    VkDescriptorSetLayout layout() const noexcept { return layout_.get(); }
    VkDescriptorSet get() const noexcept { return set_; }

private:
    UniqueVkDescriptorSetLayout layout_;
    UniqueVkDescriptorPool pool_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;  // freed with the pool
};

}  // namespace vtpage
