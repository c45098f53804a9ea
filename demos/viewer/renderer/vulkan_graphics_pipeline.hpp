// The viewer's graphics pipelines in one shape: a vertex and a fragment stage, no vertex input
// (vertices come from push constants or by device address), triangle lists, both faces drawn,
// dynamic viewport and scissor, dynamic rendering into one colour attachment and optionally a
// depth attachment. The ground plane's (vulkan_ground_plane_pipeline.hpp) and the scene's
// (vulkan_scene_pipeline.hpp) pipelines differ only in what this takes.
#pragma once

#include <vulkan/vulkan.h>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

struct GraphicsPipelineShape {
    VkShaderModule vertex = VK_NULL_HANDLE;
    // VK_NULL_HANDLE: no fragment stage, depth only (write_mask 0): a depth pre-pass.
    VkShaderModule fragment = VK_NULL_HANDLE;
    VkFormat colour_format = VK_FORMAT_UNDEFINED;
    VkColorComponentFlags write_mask = 0;
    // VK_FORMAT_UNDEFINED: no depth attachment; otherwise depth tested (less or equal), and
    // written unless blended.
    VkFormat depth_format = VK_FORMAT_UNDEFINED;
    // Alpha blended over what is drawn (an RGBA target; integer targets are never blended), and
    // no depth writes.
    bool blended = false;
    const VkSpecializationInfo* specialization = nullptr;  // of the fragment stage
    const char* owner = "";                                // for errors: who makes it
    const char* name = "";                                 // for errors and debuggers
};

UniqueVkPipeline make_graphics_pipeline(VulkanContext& context, VkPipelineLayout layout,
                                        const GraphicsPipelineShape& shape);

}  // namespace vtpage::viewer
