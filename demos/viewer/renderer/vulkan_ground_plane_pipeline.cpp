#include "renderer/vulkan_ground_plane_pipeline.hpp"

#include "renderer/ground_plane_shaders.hpp"
#include "renderer/vulkan_graphics_pipeline.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::viewer {

namespace {

UniqueVkPipeline make_pipeline(VulkanContext& context, VkPipelineLayout layout,
                               VkShaderModule vertex, VkShaderModule fragment, VkFormat format,
                               VkColorComponentFlags write_mask, const char* name) {
    return make_graphics_pipeline(context, layout,
                                  {.vertex = vertex,
                                   .fragment = fragment,
                                   .colour_format = format,
                                   .write_mask = write_mask,
                                   .owner = "GroundPlanePipelines",
                                   .name = name});
}

}  // namespace

GroundPlanePipelines::GroundPlanePipelines(VulkanContext& context, VkFormat colour_format,
                                           VkFormat sample_position_format,
                                           VkFormat feedback_format) {
    VkPushConstantRange range{push_stages, 0, sizeof(GroundPlanePushConstants)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(context.device(), &layout_info, nullptr, &layout),
             "GroundPlanePipelines", "vkCreatePipelineLayout");
    layout_ = UniqueVkPipelineLayout(context.device(), layout);

    auto vertex = make_shader_module(context, ground_plane_vertex_spirv(), "ground_plane.vert");
    auto fragment = make_shader_module(context, ground_plane_fragment_spirv(), "ground_plane.frag");
    auto positions = make_shader_module(context, ground_plane_sample_position_fragment_spirv(),
                                        "ground_plane_sample_position.frag");
    auto feedback = make_shader_module(context, ground_plane_feedback_fragment_spirv(),
                                       "ground_plane_feedback.frag");
    const VkColorComponentFlags rgba = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                       VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    colour_ = make_pipeline(context, layout, vertex.get(), fragment.get(), colour_format, rgba,
                            "vtpage ground plane");
    sample_positions_ =
        make_pipeline(context, layout, vertex.get(), positions.get(), sample_position_format, rgba,
                      "vtpage ground plane sample positions");
    feedback_ = make_pipeline(context, layout, vertex.get(), feedback.get(), feedback_format,
                              VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT,
                              "vtpage ground plane feedback");
}

}  // namespace vtpage::viewer
