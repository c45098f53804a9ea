// A 2D image with its own device-local memory and a view of all its levels (of its depth where
// the format is a depth format without stencil, else of its colour): the renderer's targets, and
// small sampled images such as the level-of-detail probe.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

class VulkanImage {
public:
    VulkanImage() = default;
    // `levels`: mip levels, the first of `extent`.
    VulkanImage(VulkanContext& context, VkExtent2D extent, VkFormat format, VkImageUsageFlags usage,
                const char* name = nullptr, std::uint32_t levels = 1);
    VulkanImage(VulkanImage&&) noexcept = default;
    VulkanImage& operator=(VulkanImage&&) noexcept = default;

    VkImage get() const noexcept { return image_.get(); }
    VkImageView view() const noexcept { return view_.get(); }
    VkFormat format() const noexcept { return format_; }
    VkExtent2D extent() const noexcept { return extent_; }

private:
    UniqueVkDeviceMemory memory_;  // members go in reverse: view, image, then memory
    UniqueVkImage image_;
    UniqueVkImageView view_;
    VkFormat format_ = VK_FORMAT_UNDEFINED;
    VkExtent2D extent_{};
};

}  // namespace vtpage
