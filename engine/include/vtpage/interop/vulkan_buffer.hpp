// A Vulkan buffer with its own memory: device-local for what the GPU reads each frame, or host
// visible and persistently mapped for uploads and readbacks. Buffers made with
// VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT report their 64-bit device address.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

enum class BufferMemory {
    device_local,  // not mapped
    upload,        // host visible and coherent, written by the CPU, read by the GPU
    readback,      // host visible, cached where the device offers it, read by the CPU
};

class VulkanBuffer {
public:
    VulkanBuffer() = default;
    VulkanBuffer(VulkanContext& context, VkDeviceSize size, VkBufferUsageFlags usage,
                 BufferMemory memory, const char* name = nullptr);
    VulkanBuffer(VulkanBuffer&&) noexcept = default;
    VulkanBuffer& operator=(VulkanBuffer&&) noexcept = default;

    VkBuffer get() const noexcept { return buffer_.get(); }
    explicit operator bool() const noexcept { return bool(buffer_); }
    VkDeviceSize size() const noexcept { return size_; }
    VkDeviceAddress device_address() const noexcept { return address_; }
    // The mapping of upload and readback buffers (nullptr for device-local ones).
    std::byte* mapped() const noexcept { return mapped_; }
    // Makes what the device wrote visible to the host (a no-op on coherent memory).
    void invalidate() const;
    // Makes what the host wrote visible to the device (a no-op on coherent memory).
    void flush() const;

private:
    UniqueVkDeviceMemory memory_;  // destroyed after the buffer (members go in reverse order)
    UniqueVkBuffer buffer_;
    VkDeviceSize size_ = 0;
    VkDeviceAddress address_ = 0;
    std::byte* mapped_ = nullptr;
    bool coherent_ = true;
};

}  // namespace vtpage
