#include "renderer/vulkan_compute_pipeline.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage::viewer {

ComputePipeline::ComputePipeline(VulkanContext& context, std::span<const std::uint32_t> spirv,
                                 std::uint32_t push_bytes, const char* name)
    : push_bytes_(push_bytes) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(context.device(), &layout_info, nullptr, &layout),
             "ComputePipeline", "vkCreatePipelineLayout");
    layout_ = UniqueVkPipelineLayout(context.device(), layout);

    auto module = make_shader_module(context, spirv, name);
    VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = module.get();
    create.stage.pName = "main";
    create.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vk_check(
        vkCreateComputePipelines(context.device(), VK_NULL_HANDLE, 1, &create, nullptr, &pipeline),
        "ComputePipeline", "vkCreateComputePipelines");
    context.set_name(VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<std::uint64_t>(pipeline), name);
    pipeline_ = UniqueVkPipeline(context.device(), pipeline);
}

void ComputePipeline::dispatch(VkCommandBuffer commands, const void* push, std::uint32_t width,
                               std::uint32_t height) const {
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
    vkCmdPushConstants(commands, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_, push);
    vkCmdDispatch(commands, (width + group_side - 1) / group_side,
                  (height + group_side - 1) / group_side, 1);
}

}  // namespace vtpage::viewer
