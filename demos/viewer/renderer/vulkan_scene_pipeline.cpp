#include "renderer/vulkan_scene_pipeline.hpp"

#include "renderer/scene_shaders.hpp"
#include "renderer/vulkan_graphics_pipeline.hpp"
#include "renderer/vulkan_reference_textures.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::viewer {

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
    // Blended draws are depth tested but do not write depth.
    const auto pipeline = [&](VkShaderModule stage_vertex, VkShaderModule stage_fragment,
                              VkFormat format, VkColorComponentFlags mask, bool blended,
                              const VkSpecializationInfo* fragment_specialization,
                              const char* name) {
        return make_graphics_pipeline(context, layout,
                                      {stage_vertex, stage_fragment, format, mask, depth_format,
                                       blended, fragment_specialization, "ScenePipelines", name});
    };
    colour_ = pipeline(vertex.get(), fragment.get(), colour_format, rgba, false,
                       colour_specialization, "vtpage scene colour");
    colour_blended_ = pipeline(vertex.get(), fragment.get(), colour_format, rgba, true,
                               colour_specialization, "vtpage scene colour, blended");
    feedback_ = pipeline(feedback_vertex.get(), feedback.get(), feedback_format, rg, false, nullptr,
                         "vtpage scene feedback");
    feedback_blended_ = pipeline(feedback_vertex.get(), feedback.get(), feedback_format, rg, true,
                                 nullptr, "vtpage scene feedback, blended");
}

}  // namespace vtpage::viewer
