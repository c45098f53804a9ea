#include "interop/vulkan_indirection_scatter.hpp"

#include "interop/vulkan_shaders.hpp"

namespace vtpage::interop_detail {

IndirectionScatterPipeline::IndirectionScatterPipeline(VulkanContext& context)
    : pipeline_(context, indirection_scatter_compute_spirv(),
                sizeof(IndirectionScatterPushConstants), "vtpage indirection scatter") {}

void IndirectionScatterPipeline::record(VkCommandBuffer commands,
                                        const IndirectionScatterPushConstants& push) const {
    pipeline_.dispatch(commands, push, (push.count + group_size - 1) / group_size);
}

}  // namespace vtpage::interop_detail
