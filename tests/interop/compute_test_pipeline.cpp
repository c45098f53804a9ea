#include "compute_test_pipeline.hpp"

#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_shader_module.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage::test {

ComputeTestPipeline::ComputeTestPipeline(VulkanContext& context,
                                         std::span<const std::uint32_t> spirv,
                                         std::uint32_t push_bytes, std::uint32_t group_size,
                                         const char* name)
    : context_(context), push_bytes_(push_bytes), group_size_(group_size) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
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

void ComputeTestPipeline::record(VkCommandBuffer commands, std::span<const std::byte> push,
                                 std::uint32_t invocations) const {
    if (push.size() != push_bytes_) {
        throw Error(Errc::invalid_argument, "ComputeTestPipeline::record",
                    "push constants of another size than the pipeline's",
                    detail::concat(push.size(), " bytes, not ", push_bytes_));
    }
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
    vkCmdPushConstants(commands, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_,
                       push.data());
    vkCmdDispatch(commands, (invocations + group_size_ - 1) / group_size_, 1, 1);
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                          VK_ACCESS_2_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                          VK_ACCESS_2_HOST_READ_BIT);
}

}  // namespace vtpage::test
