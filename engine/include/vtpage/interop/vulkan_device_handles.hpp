// An app's own Vulkan device, as vtpage's interop classes use it: the handles, the queue family
// and what the device was created with. A renderer that already has its instance, device and
// queue hands them to VulkanContext(VulkanDeviceHandles, requirements), which adopts them (it
// destroys nothing); VulkanContext::handles() gives the same struct for a context vtpage made.
//
// What the app must enable when it creates the device (vulkan_device_requirements(backend)):
//   - Vulkan 1.3 (instance apiVersion and device);
//   - features: bufferDeviceAddress, timelineSemaphore (VkPhysicalDeviceVulkan12Features),
//     synchronization2 (VkPhysicalDeviceVulkan13Features), shaderInt64 (VkPhysicalDeviceFeatures);
//   - extensions: on the cuda backend VK_KHR_external_memory_fd and
//     VK_KHR_external_semaphore_fd (pages come in as OPAQUE_FD, CUDA fills signal a timeline);
//     on the host backend VK_EXT_external_memory_host (pages come in as host pointers);
//   - on cuda, the physical device whose deviceUUID is the CUDA device's.
// requirements.enable(...) sets those features in the app's create-info chain, and
// describe_creation(create_info) records what was enabled, so that adopting checks it and says
// what is missing (Errc::not_supported) instead of failing later inside the driver.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace vtpage {

class Backend;

// The device features vtpage uses.
struct VulkanDeviceFeatures {
    bool buffer_device_address = false;
    bool timeline_semaphore = false;
    bool synchronization2 = false;
    bool shader_int64 = false;
    // Optional: anisotropic VkSamplers, for the app's (and tests') own images; vtpage's
    // virtual-texture sampling filters anisotropically in the shader without it.
    bool sampler_anisotropy = false;
    // Optional: sampled images in the BC formats, for the app's own (the viewer's hardware
    // reference); vtpage decodes its BC tiles in the shader without it.
    bool texture_compression_bc = false;
};

struct VulkanDeviceHandles {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;  // graphics + compute: uploads are copies and a dispatch
    std::uint32_t queue_family = 0;
    // What the device was created with (describe_creation fills both).
    std::vector<std::string> enabled_extensions;
    VulkanDeviceFeatures enabled_features;
    // The app's lock on the queue where other threads submit to it too: vtpage takes it around
    // its own queue calls (set-up submits, the queue wait before a physical page is freed).
    // nullptr: vtpage uses a lock of its own, and the app submits from one thread.
    std::mutex* queue_mutex = nullptr;

    // Records the extensions and features of the create info the device was made with (the
    // pNext chain's VkPhysicalDeviceFeatures2, Vulkan12/13 features or the single-feature
    // structs, or pEnabledFeatures).
    void describe_creation(const VkDeviceCreateInfo& create);
};

struct VulkanDeviceRequirements {
    std::uint32_t api_version = VK_API_VERSION_1_3;
    std::vector<const char*> device_extensions;
    // The device whose deviceUUID this is (cuda: the CUDA device's).
    std::optional<std::array<std::uint8_t, 16>> device_uuid;
    // Sets the features vtpage needs in the app's chain (keeps what the app set).
    void enable(VkPhysicalDeviceFeatures2& features, VkPhysicalDeviceVulkan12Features& vulkan12,
                VkPhysicalDeviceVulkan13Features& vulkan13) const;
    // What of this `handles` lacks, comma-separated; empty when nothing.
    std::string missing_from(const VulkanDeviceHandles& handles) const;
};

// What a device must offer and enable for `backend`'s pages (see above).
VulkanDeviceRequirements vulkan_device_requirements(const Backend& backend);

}  // namespace vtpage
