#include "compute_test_pipeline.hpp"

#include "vulkan_test_support.hpp"

namespace vtpage::test {

ComputeTestPipeline::ComputeTestPipeline(VulkanContext& context,
                                         std::span<const std::uint32_t> spirv,
                                         std::uint32_t push_bytes, std::uint32_t group_size,
                                         const char* name)
    : context_(context), group_size_(group_size), pipeline_(context, spirv, push_bytes, name) {}

void ComputeTestPipeline::record(VkCommandBuffer commands, std::span<const std::byte> push,
                                 std::uint32_t invocations) const {
    pipeline_.dispatch(commands, push, (invocations + group_size_ - 1) / group_size_);
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                          VK_ACCESS_2_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                          VK_ACCESS_2_HOST_READ_BIT);
}

}  // namespace vtpage::test
