#include "vtpage/interop/vulkan_image.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

VulkanImage::VulkanImage(VulkanContext& context, VkExtent2D extent, VkFormat format,
                         VkImageUsageFlags usage, const char* name, std::uint32_t levels)
    : format_(format), extent_(extent) {
    VkDevice device = context.device();
    const std::string arguments =
        detail::concat(extent.width, "x", extent.height, " levels=", levels,
                       " format=", int(format), " name=", name ? name : "");
    VkImageCreateInfo create{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    create.imageType = VK_IMAGE_TYPE_2D;
    create.format = format;
    create.extent = {extent.width, extent.height, 1};
    create.mipLevels = levels;
    create.arrayLayers = 1;
    create.samples = VK_SAMPLE_COUNT_1_BIT;
    create.tiling = VK_IMAGE_TILING_OPTIMAL;
    create.usage = usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    create.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage raw = VK_NULL_HANDLE;
    vk_check(vkCreateImage(device, &create, nullptr, &raw), "VulkanImage", "vkCreateImage",
             arguments);
    image_ = UniqueVkImage(device, raw);
    if (name) context.set_name(VK_OBJECT_TYPE_IMAGE, reinterpret_cast<std::uint64_t>(raw), name);

    VkMemoryRequirements requirements{};
    vkGetImageMemoryRequirements(device, raw, &requirements);
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex =
        context.memory_type(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory raw_memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(device, &allocate, nullptr, &raw_memory), "VulkanImage",
             "vkAllocateMemory", arguments);
    memory_ = UniqueVkDeviceMemory(device, raw_memory);
    vk_check(vkBindImageMemory(device, raw, raw_memory, 0), "VulkanImage", "vkBindImageMemory",
             arguments);

    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = raw;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format;
    const bool depth = format == VK_FORMAT_D32_SFLOAT || format == VK_FORMAT_D16_UNORM ||
                       format == VK_FORMAT_X8_D24_UNORM_PACK32;
    view.subresourceRange = {depth ? VkImageAspectFlags(VK_IMAGE_ASPECT_DEPTH_BIT)
                                   : VkImageAspectFlags(VK_IMAGE_ASPECT_COLOR_BIT),
                             0, levels, 0, 1};
    VkImageView raw_view = VK_NULL_HANDLE;
    vk_check(vkCreateImageView(device, &view, nullptr, &raw_view), "VulkanImage",
             "vkCreateImageView", arguments);
    view_ = UniqueVkImageView(device, raw_view);
}

}  // namespace vtpage
