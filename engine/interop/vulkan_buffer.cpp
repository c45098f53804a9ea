#include "vtpage/interop/vulkan_buffer.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

VulkanBuffer::VulkanBuffer(VulkanContext& context, VkDeviceSize size, VkBufferUsageFlags usage,
                           BufferMemory memory, const char* name)
    : size_(size) {
    VkDevice device = context.device();
    const std::string arguments = detail::concat("size=", size, " name=", name ? name : "");
    VkBufferCreateInfo create{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create.size = size;
    create.usage = usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer raw = VK_NULL_HANDLE;
    vk_check(vkCreateBuffer(device, &create, nullptr, &raw), "VulkanBuffer", "vkCreateBuffer",
             arguments);
    buffer_ = UniqueVkBuffer(device, raw);
    if (name) context.set_name(VK_OBJECT_TYPE_BUFFER, reinterpret_cast<std::uint64_t>(raw), name);

    VkMemoryRequirements requirements{};
    vkGetBufferMemoryRequirements(device, raw, &requirements);
    VkMemoryPropertyFlags required = 0;
    VkMemoryPropertyFlags preferred = 0;
    switch (memory) {
        case BufferMemory::device_local:
            required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
            break;
        case BufferMemory::upload:
            required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
            break;
        case BufferMemory::readback:
            required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
            preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
            break;
    }
    const std::uint32_t type =
        context.memory_type(requirements.memoryTypeBits, required, preferred);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) allocate.pNext = &flags;
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = type;
    VkDeviceMemory raw_memory = VK_NULL_HANDLE;
    vk_check(vkAllocateMemory(device, &allocate, nullptr, &raw_memory), "VulkanBuffer",
             "vkAllocateMemory", arguments);
    memory_ = UniqueVkDeviceMemory(device, raw_memory);
    vk_check(vkBindBufferMemory(device, raw, raw_memory, 0), "VulkanBuffer", "vkBindBufferMemory",
             arguments);
    if (memory != BufferMemory::device_local) {
        void* pointer = nullptr;
        vk_check(vkMapMemory(device, raw_memory, 0, VK_WHOLE_SIZE, 0, &pointer), "VulkanBuffer",
                 "vkMapMemory", arguments);
        mapped_ = static_cast<std::byte*>(pointer);
        VkPhysicalDeviceMemoryProperties properties{};
        vkGetPhysicalDeviceMemoryProperties(context.physical_device(), &properties);
        coherent_ =
            properties.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    }
    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) {
        VkBufferDeviceAddressInfo info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
        info.buffer = raw;
        address_ = vkGetBufferDeviceAddress(device, &info);
    }
}

void VulkanBuffer::invalidate() const {
    if (coherent_ || !mapped_) return;
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = memory_.get();
    range.size = VK_WHOLE_SIZE;
    vk_check(vkInvalidateMappedMemoryRanges(memory_.device(), 1, &range),
             "VulkanBuffer::invalidate", "vkInvalidateMappedMemoryRanges");
}

void VulkanBuffer::flush() const {
    if (coherent_ || !mapped_) return;
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = memory_.get();
    range.size = VK_WHOLE_SIZE;
    vk_check(vkFlushMappedMemoryRanges(memory_.device(), 1, &range), "VulkanBuffer::flush",
             "vkFlushMappedMemoryRanges");
}

}  // namespace vtpage
