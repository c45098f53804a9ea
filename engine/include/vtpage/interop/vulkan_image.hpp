// A 2D image with its own device-local memory and a view (of its depth where the format is a
// depth format without stencil, else of its colour): the renderer's targets.
#pragma once

#include <vulkan/vulkan.h>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

class VulkanImage {
public:
    VulkanImage() = default;
    VulkanImage(VulkanContext& context, VkExtent2D extent, VkFormat format, VkImageUsageFlags usage,
                const char* name = nullptr);
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
