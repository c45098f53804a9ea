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

namespace {

constexpr VkColorComponentFlags rgba = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                       VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
constexpr VkColorComponentFlags rg = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT;

const char* const colour_names[2][ScenePipelines::kinds] = {
    {"vtpage scene colour", "vtpage scene colour, blended", "vtpage scene colour, masked"},
    {"vtpage scene colour, stacks", "vtpage scene colour, stacks, blended",
     "vtpage scene colour, stacks, masked"}};
const char* const feedback_names[2][ScenePipelines::kinds] = {
    {"vtpage scene feedback", "vtpage scene feedback, blended", nullptr},
    {"vtpage scene feedback, stacks", "vtpage scene feedback, stacks, blended", nullptr}};

}  // namespace

ScenePipelines::ScenePipelines(VulkanContext& context, VkFormat colour_format,
                               VkFormat feedback_format, const VulkanLodProbe& probe,
                               const Options& options)
    : context_(&context),
      colour_format_(colour_format),
      feedback_format_(feedback_format),
      reference_(options.reference != nullptr) {
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

    const std::uint32_t reference_count = reference ? reference->count() : 1;
    const VkBool32 lod_from_device = options.lod_from_device ? VK_TRUE : VK_FALSE;
    constants_[0] = {reference_count, VK_FALSE, lod_from_device};
    constants_[1] = {reference_count, VK_TRUE, lod_from_device};

    vertex_ = make_shader_module(context, scene_vertex_spirv(), "scene.vert");
    // vtpage's: scene_early.frag for the draws that never discard, scene.frag for masked ones.
    fragment_ = reference ? make_shader_module(context, scene_reference_fragment_spirv(),
                                               "scene_reference.frag")
                          : make_shader_module(context, scene_fragment_spirv(), "scene.frag");
    if (!reference) {
        early_fragment_ =
            make_shader_module(context, scene_early_fragment_spirv(), "scene_early.frag");
    }
    feedback_vertex_ =
        make_shader_module(context, scene_feedback_vertex_spirv(), "scene_feedback.vert");
    feedback_fragment_ =
        make_shader_module(context, scene_feedback_fragment_spirv(), "scene_feedback.frag");
    depth_prepass_ = make(vertex_.get(), VK_NULL_HANDLE, colour_format_, false, false, false,
                          "vtpage scene depth pre-pass");
}

UniqueVkPipeline ScenePipelines::make(VkShaderModule vertex, VkShaderModule fragment,
                                      VkFormat format, bool colour_writes_rgba, bool blend,
                                      bool stacked, const char* name) {
    // Blended draws are depth tested but do not write depth.
    const VkSpecializationMapEntry entries[] = {
        {0, offsetof(Constants, reference_count), sizeof(std::uint32_t)},
        {1, offsetof(Constants, stacks_drawn), sizeof(VkBool32)},
        {2, offsetof(Constants, lod_from_device), sizeof(VkBool32)}};
    const VkSpecializationInfo specialization{3, entries, sizeof(Constants),
                                              &constants_[stacked ? 1 : 0]};
    const VkColorComponentFlags mask =
        fragment == VK_NULL_HANDLE ? 0 : (colour_writes_rgba ? rgba : rg);
    return make_graphics_pipeline(
        *context_, layout_.get(),
        {vertex, fragment, format, mask, depth_format, blend,
         fragment == VK_NULL_HANDLE ? nullptr : &specialization, "ScenePipelines", name});
}

ScenePipelines::Variant ScenePipelines::colour_variant(bool stacked, Kind kind) const noexcept {
    return {stacked && !reference_ ? 1 : 0, kind == masked && reference_ ? opaque : kind};
}

// The feedback shader has no side effects: early tests for masked draws too.
ScenePipelines::Variant ScenePipelines::feedback_variant(bool stacked, Kind kind) const noexcept {
    return {stacked && !reference_ ? 1 : 0, kind == masked ? opaque : kind};
}

void ScenePipelines::build_colour(Variant variant) {
    UniqueVkPipeline& slot = colour_[variant.stacked][variant.kind];
    if (slot.get() != VK_NULL_HANDLE) return;
    const VkShaderModule fragment =
        reference_ || variant.kind == masked ? fragment_.get() : early_fragment_.get();
    slot = make(vertex_.get(), fragment, colour_format_, true, variant.kind == blended,
                variant.stacked == 1, colour_names[variant.stacked][variant.kind]);
}

void ScenePipelines::build_feedback(Variant variant) {
    UniqueVkPipeline& slot = feedback_[variant.stacked][variant.kind];
    if (slot.get() != VK_NULL_HANDLE) return;
    slot = make(feedback_vertex_.get(), feedback_fragment_.get(), feedback_format_, false,
                variant.kind == blended, variant.stacked == 1,
                feedback_names[variant.stacked][variant.kind]);
}

void ScenePipelines::build_for(std::span<const SceneGpuDraw> draws) {
    for (const SceneGpuDraw& draw : draws) {
        build_colour(colour_variant(draw.stacked, kind_of(draw)));
        build_feedback(feedback_variant(draw.stacked, kind_of(draw)));
    }
}

std::size_t ScenePipelines::pipelines_built() const noexcept {
    std::size_t built = 0;
    for (int stacked = 0; stacked < 2; ++stacked) {
        for (int kind = 0; kind < kinds; ++kind) {
            built += colour_[stacked][kind].get() != VK_NULL_HANDLE;
            built += feedback_[stacked][kind].get() != VK_NULL_HANDLE;
        }
    }
    return built;
}

ScenePipelines::Pass ScenePipelines::pass_of(const UniqueVkPipeline (&made)[2][kinds],
                                             Variant (ScenePipelines::*variant_of)(bool, Kind)
                                                 const noexcept) const noexcept {
    Pass pass;
    for (int stacked = 0; stacked < 2; ++stacked) {
        for (int kind = 0; kind < kinds; ++kind) {
            const Variant v = (this->*variant_of)(stacked == 1, static_cast<Kind>(kind));
            pass.pipelines[stacked][kind] = made[v.stacked][v.kind].get();
        }
    }
    return pass;
}

ScenePipelines::Pass ScenePipelines::colour() const noexcept {
    return pass_of(colour_, &ScenePipelines::colour_variant);
}

ScenePipelines::Pass ScenePipelines::feedback() const noexcept {
    return pass_of(feedback_, &ScenePipelines::feedback_variant);
}

}  // namespace vtpage::viewer
