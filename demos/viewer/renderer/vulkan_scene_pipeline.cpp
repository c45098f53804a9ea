#include "renderer/vulkan_scene_pipeline.hpp"

#include "renderer/scene_shaders.hpp"
#include "renderer/vulkan_reference_textures.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::viewer {

namespace {

struct PipelineShape {
    VkShaderModule vertex = VK_NULL_HANDLE;
    VkShaderModule fragment = VK_NULL_HANDLE;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkColorComponentFlags write_mask = 0;
    bool blended = false;  // alpha blending over, and no depth writes
    const char* name = "";
    const VkSpecializationInfo* specialization = nullptr;  // of the fragment stage
};

VkPipelineColorBlendAttachmentState blend_state(const PipelineShape& shape) {
    VkPipelineColorBlendAttachmentState attachment{};
    attachment.colorWriteMask = shape.write_mask;
    // The feedback target holds integers, which are never blended.
    if (!shape.blended || shape.write_mask != 0xf) return attachment;
    attachment.blendEnable = VK_TRUE;
    attachment.srcColorBlendFactor = VK_BLEND_FACTOR_SRC_ALPHA;
    attachment.dstColorBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA;
    attachment.colorBlendOp = VK_BLEND_OP_ADD;
    attachment.srcAlphaBlendFactor = VK_BLEND_FACTOR_ONE;
    attachment.dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA;
    attachment.alphaBlendOp = VK_BLEND_OP_ADD;
    return attachment;
}

UniqueVkPipeline make_pipeline(VulkanContext& context, VkPipelineLayout layout,
                               const PipelineShape& shape) {
    VkPipelineShaderStageCreateInfo stages[2]{};
    for (int i = 0; i < 2; ++i) {
        stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        stages[i].stage = i == 0 ? VK_SHADER_STAGE_VERTEX_BIT : VK_SHADER_STAGE_FRAGMENT_BIT;
        stages[i].module = i == 0 ? shape.vertex : shape.fragment;
        stages[i].pName = "main";
    }
    stages[1].pSpecializationInfo = shape.specialization;
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
    raster.cullMode = VK_CULL_MODE_NONE;
    raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    raster.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo multisample{
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineDepthStencilStateCreateInfo depth{
        VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
    depth.depthTestEnable = VK_TRUE;
    depth.depthWriteEnable = shape.blended ? VK_FALSE : VK_TRUE;
    depth.depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL;
    const VkPipelineColorBlendAttachmentState attachment = blend_state(shape);
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
    rendering.pColorAttachmentFormats = &shape.format;
    rendering.depthAttachmentFormat = ScenePipelines::depth_format;

    VkGraphicsPipelineCreateInfo create{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                        &rendering};
    create.stageCount = 2;
    create.pStages = stages;
    create.pVertexInputState = &vertex_input;
    create.pInputAssemblyState = &assembly;
    create.pViewportState = &viewport;
    create.pRasterizationState = &raster;
    create.pMultisampleState = &multisample;
    create.pDepthStencilState = &depth;
    create.pColorBlendState = &blend;
    create.pDynamicState = &dynamic;
    create.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vk_check(
        vkCreateGraphicsPipelines(context.device(), VK_NULL_HANDLE, 1, &create, nullptr, &pipeline),
        "ScenePipelines", "vkCreateGraphicsPipelines", shape.name);
    context.set_name(VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<std::uint64_t>(pipeline),
                     shape.name);
    return UniqueVkPipeline(context.device(), pipeline);
}

}  // namespace

ScenePipelines::ScenePipelines(VulkanContext& context, VkFormat colour_format,
                               VkFormat feedback_format, const VulkanReferenceTextures* reference) {
    VkPushConstantRange range{push_stages, 0, sizeof(ScenePushConstants)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    const VkDescriptorSetLayout set_layout = reference ? reference->set_layout() : VK_NULL_HANDLE;
    if (reference) {
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &set_layout;
    }
    VkPipelineLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(context.device(), &layout_info, nullptr, &layout),
             "ScenePipelines", "vkCreatePipelineLayout");
    layout_ = UniqueVkPipelineLayout(context.device(), layout);

    auto vertex = make_shader_module(context, scene_vertex_spirv(), "scene.vert");
    auto fragment = reference ? make_shader_module(context, scene_reference_fragment_spirv(),
                                                   "scene_reference.frag")
                              : make_shader_module(context, scene_fragment_spirv(), "scene.frag");
    // scene_reference_count: the reference's array of textures.
    const std::uint32_t count = reference ? reference->count() : 1;
    const VkSpecializationMapEntry entry{0, 0, sizeof(count)};
    const VkSpecializationInfo specialization{1, &entry, sizeof(count), &count};
    const VkSpecializationInfo* colour_specialization = reference ? &specialization : nullptr;
    auto feedback_vertex =
        make_shader_module(context, scene_feedback_vertex_spirv(), "scene_feedback.vert");
    auto feedback =
        make_shader_module(context, scene_feedback_fragment_spirv(), "scene_feedback.frag");
    const VkColorComponentFlags rgba = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                       VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    const VkColorComponentFlags rg = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT;
    colour_ = make_pipeline(context, layout,
                            {vertex.get(), fragment.get(), colour_format, rgba, false,
                             "vtpage scene colour", colour_specialization});
    colour_blended_ = make_pipeline(context, layout,
                                    {vertex.get(), fragment.get(), colour_format, rgba, true,
                                     "vtpage scene colour, blended", colour_specialization});
    feedback_ = make_pipeline(context, layout,
                              {feedback_vertex.get(), feedback.get(), feedback_format, rg, false,
                               "vtpage scene feedback"});
    feedback_blended_ = make_pipeline(context, layout,
                                      {feedback_vertex.get(), feedback.get(), feedback_format, rg,
                                       true, "vtpage scene feedback, blended"});
}

}  // namespace vtpage::viewer
