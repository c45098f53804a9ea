// Owned Vulkan objects: one small RAII type per kind of device child, destroyed with the device
// that made it. Move-only; a moved-from or default object holds VK_NULL_HANDLE.
#pragma once

#include <vulkan/vulkan.h>

#include <utility>

namespace vtpage {

template <typename Handle, void (*Destroy)(VkDevice, Handle, const VkAllocationCallbacks*)>
class VulkanObject {
public:
    VulkanObject() noexcept = default;
    VulkanObject(VkDevice device, Handle handle) noexcept : device_(device), handle_(handle) {}
    VulkanObject(VulkanObject&& other) noexcept
        : device_(other.device_), handle_(std::exchange(other.handle_, Handle(VK_NULL_HANDLE))) {}
    VulkanObject& operator=(VulkanObject&& other) noexcept {
        if (this != &other) {
            reset();
            device_ = other.device_;
            handle_ = std::exchange(other.handle_, Handle(VK_NULL_HANDLE));
        }
        return *this;
    }
    VulkanObject(const VulkanObject&) = delete;
    VulkanObject& operator=(const VulkanObject&) = delete;
    ~VulkanObject() { reset(); }

    Handle get() const noexcept { return handle_; }
    VkDevice device() const noexcept { return device_; }
    explicit operator bool() const noexcept { return handle_ != Handle(VK_NULL_HANDLE); }
    void reset() noexcept {
        if (handle_ != Handle(VK_NULL_HANDLE)) Destroy(device_, handle_, nullptr);
        handle_ = Handle(VK_NULL_HANDLE);
    }
    // Gives up ownership.
    Handle release() noexcept { return std::exchange(handle_, Handle(VK_NULL_HANDLE)); }

private:
    VkDevice device_ = VK_NULL_HANDLE;
    Handle handle_ = VK_NULL_HANDLE;
};

using UniqueVkBuffer = VulkanObject<VkBuffer, &vkDestroyBuffer>;
using UniqueVkImage = VulkanObject<VkImage, &vkDestroyImage>;
using UniqueVkImageView = VulkanObject<VkImageView, &vkDestroyImageView>;
using UniqueVkDeviceMemory = VulkanObject<VkDeviceMemory, &vkFreeMemory>;
using UniqueVkSemaphore = VulkanObject<VkSemaphore, &vkDestroySemaphore>;
using UniqueVkFence = VulkanObject<VkFence, &vkDestroyFence>;
using UniqueVkCommandPool = VulkanObject<VkCommandPool, &vkDestroyCommandPool>;
using UniqueVkQueryPool = VulkanObject<VkQueryPool, &vkDestroyQueryPool>;
using UniqueVkShaderModule = VulkanObject<VkShaderModule, &vkDestroyShaderModule>;
using UniqueVkPipelineLayout = VulkanObject<VkPipelineLayout, &vkDestroyPipelineLayout>;
using UniqueVkPipeline = VulkanObject<VkPipeline, &vkDestroyPipeline>;
using UniqueVkSwapchain = VulkanObject<VkSwapchainKHR, &vkDestroySwapchainKHR>;
using UniqueVkSampler = VulkanObject<VkSampler, &vkDestroySampler>;
using UniqueVkDescriptorSetLayout =
    VulkanObject<VkDescriptorSetLayout, &vkDestroyDescriptorSetLayout>;
using UniqueVkDescriptorPool = VulkanObject<VkDescriptorPool, &vkDestroyDescriptorPool>;

}  // namespace vtpage
