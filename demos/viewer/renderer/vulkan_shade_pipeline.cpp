#include "renderer/vulkan_shade_pipeline.hpp"

#include "renderer/ground_plane_shaders.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage::viewer {

namespace {

// The shader sums its quality counts over each subgroup before its atomics.
VulkanContext& require_subgroup_arithmetic(VulkanContext& context) {
    VkPhysicalDeviceSubgroupProperties subgroups{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    properties.pNext = &subgroups;
    vkGetPhysicalDeviceProperties2(context.physical_device(), &properties);
    if ((subgroups.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
        (subgroups.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT)) {
        return context;
    }
    throw Error(Errc::not_supported, "ShadePipeline",
                "the deferred textured pass needs subgroup arithmetic in compute shaders",
                detail::concat("stages=", subgroups.supportedStages,
                               " operations=", subgroups.supportedOperations));
}

}  // namespace

ShadePipeline::ShadePipeline(VulkanContext& context)
    : pipeline_(require_subgroup_arithmetic(context), ground_plane_shade_compute_spirv(),
                sizeof(ShadePushConstants), "vtpage ground plane shade") {}

}  // namespace vtpage::viewer
