#include "vtpage/interop/vulkan_device_handles.hpp"

#include <algorithm>

#include "vtpage/backend/backend.hpp"

namespace vtpage {

namespace {

// The features one struct of a create-info chain enables.
void record_features(const VkBaseInStructure* link, VulkanDeviceFeatures& f) {
    switch (link->sType) {
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2: {
            auto* s = reinterpret_cast<const VkPhysicalDeviceFeatures2*>(link);
            f.shader_int64 |= bool(s->features.shaderInt64);
            f.sampler_anisotropy |= bool(s->features.samplerAnisotropy);
            f.texture_compression_bc |= bool(s->features.textureCompressionBC);
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
            auto* s = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(link);
            f.buffer_device_address |= bool(s->bufferDeviceAddress);
            f.timeline_semaphore |= bool(s->timelineSemaphore);
            break;
        }
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
            f.synchronization2 |= bool(
                reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(link)->synchronization2);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES:
            f.buffer_device_address |=
                bool(reinterpret_cast<const VkPhysicalDeviceBufferDeviceAddressFeatures*>(link)
                         ->bufferDeviceAddress);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
            f.timeline_semaphore |=
                bool(reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(link)
                         ->timelineSemaphore);
            break;
        case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES:
            f.synchronization2 |=
                bool(reinterpret_cast<const VkPhysicalDeviceSynchronization2Features*>(link)
                         ->synchronization2);
            break;
        default:
            break;
    }
}

}  // namespace

void VulkanDeviceHandles::describe_creation(const VkDeviceCreateInfo& create) {
    enabled_extensions.clear();
    for (std::uint32_t i = 0; i < create.enabledExtensionCount; ++i) {
        enabled_extensions.emplace_back(create.ppEnabledExtensionNames[i]);
    }
    enabled_features = {};
    if (create.pEnabledFeatures) {
        enabled_features.shader_int64 = create.pEnabledFeatures->shaderInt64;
        enabled_features.sampler_anisotropy = create.pEnabledFeatures->samplerAnisotropy;
        enabled_features.texture_compression_bc = create.pEnabledFeatures->textureCompressionBC;
    }
    for (auto* link = static_cast<const VkBaseInStructure*>(create.pNext); link;
         link = link->pNext) {
        record_features(link, enabled_features);
    }
}

void VulkanDeviceRequirements::enable(VkPhysicalDeviceFeatures2& features,
                                      VkPhysicalDeviceVulkan12Features& vulkan12,
                                      VkPhysicalDeviceVulkan13Features& vulkan13) const {
    features.features.shaderInt64 = VK_TRUE;
    vulkan12.bufferDeviceAddress = VK_TRUE;
    vulkan12.timelineSemaphore = VK_TRUE;
    vulkan13.synchronization2 = VK_TRUE;
}

std::string VulkanDeviceRequirements::missing_from(const VulkanDeviceHandles& handles) const {
    std::vector<std::string> missing;
    const VulkanDeviceFeatures& f = handles.enabled_features;
    if (!f.buffer_device_address) missing.emplace_back("bufferDeviceAddress");
    if (!f.timeline_semaphore) missing.emplace_back("timelineSemaphore");
    if (!f.synchronization2) missing.emplace_back("synchronization2");
    if (!f.shader_int64) missing.emplace_back("shaderInt64");
    for (const char* name : device_extensions) {
        const auto& on = handles.enabled_extensions;
        if (std::find(on.begin(), on.end(), name) == on.end()) missing.emplace_back(name);
    }
    std::string text;
    for (const std::string& name : missing) text += (text.empty() ? "" : ", ") + name;
    return text;
}

VulkanDeviceRequirements vulkan_device_requirements(const Backend& backend) {
    VulkanDeviceRequirements requirements;
    const Capabilities& caps = backend.capabilities();
    if (caps.gpu) {
        requirements.device_extensions = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                                          VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
        requirements.device_uuid = caps.device_uuid;
    } else {
        requirements.device_extensions = {VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME};
    }
    return requirements;
}

}  // namespace vtpage
