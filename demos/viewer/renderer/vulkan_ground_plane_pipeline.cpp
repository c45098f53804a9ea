#include "renderer/vulkan_ground_plane_pipeline.hpp"

#include "renderer/ground_plane_shaders.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::viewer {

namespace {

UniqueVkPipeline make_pipeline(VulkanContext& context, VkPipelineLayout layout,
                               VkShaderModule vertex, VkShaderModule fragment, VkFormat format,
                               VkColorComponentFlags write_mask, const char* name) {
    VkPipelineShaderStageCreateInfo stages[2]{};
    stages[0].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = vertex;
    stages[0].pName = "main";
    stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = fragment;
    stages[1].pName = "main";

    VkPipelineVertexInputStateCreateInfo vertex_input{
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly{
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkPipelineViewportStateCreateInfo viewport{
        VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    viewport.viewportCount = 1;
    viewport.scissorCount = 1;
    VkPipelineRasterizationStateCreateInfo raster{
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    raster.polygonMode = VK_POLYGON_MODE_FILL;
    raster.cullMode = VK_CULL_MODE_NONE;  // the camera may fly under the plane
    raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    raster.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo multisample{
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState attachment{};
    attachment.colorWriteMask = write_mask;
    VkPipelineColorBlendStateCreateInfo blend{
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    blend.attachmentCount = 1;
    blend.pAttachments = &attachment;
    const VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
    dynamic.dynamicStateCount = 2;
    dynamic.pDynamicStates = dynamic_states;
    VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachmentFormats = &format;

    VkGraphicsPipelineCreateInfo create{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                        &rendering};
    create.stageCount = 2;
    create.pStages = stages;
    create.pVertexInputState = &vertex_input;
    create.pInputAssemblyState = &assembly;
    create.pViewportState = &viewport;
    create.pRasterizationState = &raster;
    create.pMultisampleState = &multisample;
    create.pColorBlendState = &blend;
    create.pDynamicState = &dynamic;
    create.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vk_check(
        vkCreateGraphicsPipelines(context.device(), VK_NULL_HANDLE, 1, &create, nullptr, &pipeline),
        "GroundPlanePipelines", "vkCreateGraphicsPipelines", name);
    context.set_name(VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<std::uint64_t>(pipeline), name);
    return UniqueVkPipeline(context.device(), pipeline);
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
