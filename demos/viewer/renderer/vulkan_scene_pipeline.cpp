#include "renderer/vulkan_scene_pipeline.hpp"

#include <cstddef>

#include "renderer/scene_shaders.hpp"
#include "renderer/vulkan_graphics_pipeline.hpp"
#include "renderer/vulkan_reference_textures.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_lod_probe.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::viewer {

ScenePipelines::ScenePipelines(VulkanContext& context, VkFormat colour_format,
                               VkFormat feedback_format, const VulkanLodProbe& probe,
                               const Options& options) {
    const VulkanReferenceTextures* reference = options.reference;
    VkPushConstantRange range{push_stages, 0, sizeof(ScenePushConstants)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    const VkDescriptorSetLayout set_layouts[2] = {
        probe.set_layout(), reference ? reference->set_layout() : VK_NULL_HANDLE};
    layout_info.setLayoutCount = reference ? 2 : 1;
    layout_info.pSetLayouts = set_layouts;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(context.device(), &layout_info, nullptr, &layout),
             "ScenePipelines", "vkCreatePipelineLayout");
    layout_ = UniqueVkPipelineLayout(context.device(), layout);

    auto vertex = make_shader_module(context, scene_vertex_spirv(), "scene.vert");
    // vtpage's: scene_early.frag for the draws that never discard, scene.frag for masked ones.
    auto fragment = reference ? make_shader_module(context, scene_reference_fragment_spirv(),
                                                   "scene_reference.frag")
                              : make_shader_module(context, scene_fragment_spirv(), "scene.frag");
    auto early_fragment =
        reference ? UniqueVkShaderModule()
                  : make_shader_module(context, scene_early_fragment_spirv(), "scene_early.frag");
    // Specialization: scene_reference_count (id 0), the reference's array of textures,
    // scene_stacks_drawn (id 1), whether the stack path is compiled in, and
    // scene_lod_from_device (id 2).
    struct Constants {
        std::uint32_t reference_count;
        VkBool32 stacks_drawn;
        VkBool32 lod_from_device;
    };
    const VkSpecializationMapEntry entries[] = {
        {0, offsetof(Constants, reference_count), sizeof(std::uint32_t)},
        {1, offsetof(Constants, stacks_drawn), sizeof(VkBool32)},
        {2, offsetof(Constants, lod_from_device), sizeof(VkBool32)}};
    const std::uint32_t reference_count = reference ? reference->count() : 1;
    const VkBool32 lod_from_device = options.lod_from_device ? VK_TRUE : VK_FALSE;
    const Constants constants[2] = {{reference_count, VK_FALSE, lod_from_device},
                                    {reference_count, VK_TRUE, lod_from_device}};
    const VkSpecializationInfo specializations[2] = {
        {3, entries, sizeof(Constants), &constants[0]},
        {3, entries, sizeof(Constants), &constants[1]}};
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
    static const char* const colour_names[2][kinds] = {
        {"vtpage scene colour", "vtpage scene colour, blended", "vtpage scene colour, masked"},
        {"vtpage scene colour, stacks", "vtpage scene colour, stacks, blended",
         "vtpage scene colour, stacks, masked"}};
    static const char* const feedback_names[2][2] = {
        {"vtpage scene feedback", "vtpage scene feedback, blended"},
        {"vtpage scene feedback, stacks", "vtpage scene feedback, stacks, blended"}};
    depth_prepass_ = pipeline(vertex.get(), VK_NULL_HANDLE, colour_format, 0, false, nullptr,
                              "vtpage scene depth pre-pass");
    // The reference never samples stacks.
    const int variants = options.stacks && !reference ? 2 : 1;
    for (int stacked = 0; stacked < variants; ++stacked) {
        for (int kind = opaque; kind < kinds; ++kind) {
            const bool blend = kind == blended;
            const VkShaderModule colour_fragment =
                reference || kind == masked ? fragment.get() : early_fragment.get();
            if (kind != masked || !reference) {
                colour_[stacked][kind] =
                    pipeline(vertex.get(), colour_fragment, colour_format, rgba, blend,
                             &specializations[stacked], colour_names[stacked][kind]);
            }
            if (kind != masked) {  // the feedback shader has no side effects: early tests anyway
                feedback_[stacked][kind] =
                    pipeline(feedback_vertex.get(), feedback.get(), feedback_format, rg, blend,
                             &specializations[stacked], feedback_names[stacked][kind]);
            }
        }
    }
}

namespace {

// Draws with stacks take the plain pipelines where no stacked ones were built, masked draws the
// opaque ones where no masked ones were.
ScenePipelines::Pass pass_of(const UniqueVkPipeline (&pipelines)[2][ScenePipelines::kinds]) {
    ScenePipelines::Pass pass;
    const int built = pipelines[1][ScenePipelines::opaque].get() != VK_NULL_HANDLE ? 2 : 1;
    for (int stacked = 0; stacked < 2; ++stacked) {
        for (int kind = 0; kind < ScenePipelines::kinds; ++kind) {
            const int from = stacked < built ? stacked : 0;
            const VkPipeline own = pipelines[from][kind].get();
            pass.pipelines[stacked][kind] =
                own != VK_NULL_HANDLE ? own : pipelines[from][ScenePipelines::opaque].get();
        }
    }
    return pass;
}

}  // namespace

ScenePipelines::Pass ScenePipelines::colour() const noexcept { return pass_of(colour_); }

ScenePipelines::Pass ScenePipelines::feedback() const noexcept { return pass_of(feedback_); }

}  // namespace vtpage::viewer
