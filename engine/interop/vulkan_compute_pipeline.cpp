#include "vtpage/interop/vulkan_compute_pipeline.hpp"

#include "vtpage/base/error.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"

namespace vtpage {

VulkanComputePipeline::VulkanComputePipeline(VulkanContext& context,
                                             std::span<const std::uint32_t> spirv,
                                             std::uint32_t push_bytes, const char* name)
    : push_bytes_(push_bytes), name_(name) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    vk_check(vkCreatePipelineLayout(context.device(), &layout_info, nullptr, &layout), name,
             "vkCreatePipelineLayout");
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
        name, "vkCreateComputePipelines");
    context.set_name(VK_OBJECT_TYPE_PIPELINE, reinterpret_cast<std::uint64_t>(pipeline), name);
    pipeline_ = UniqueVkPipeline(context.device(), pipeline);
}

void VulkanComputePipeline::dispatch(VkCommandBuffer commands, std::span<const std::byte> push,
                                     std::uint32_t groups_x, std::uint32_t groups_y,
                                     std::uint32_t groups_z) const {
    if (push.size() != push_bytes_) {
        throw Error(Errc::invalid_argument, "VulkanComputePipeline::dispatch",
                    "push constants of another size than the pipeline's",
                    detail::concat(name_, ": ", push.size(), " bytes, not ", push_bytes_));
    }
    if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
    if (push_bytes_ > 0) {
        vkCmdPushConstants(commands, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_,
                           push.data());
    }
    vkCmdDispatch(commands, groups_x, groups_y, groups_z);
}

}  // namespace vtpage
