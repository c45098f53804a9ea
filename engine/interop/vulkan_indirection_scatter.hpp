// The compute pipeline of the indirection table's scattered uploads (shaders/
// indirection_scatter.comp): writes `count` (page, value) pairs into the table with one
// dispatch, where a buffer copy would need one region per run of neighbouring pages (each region
// costs about 2 us of GPU time on an H100).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "vtpage/interop/vulkan_compute_pipeline.hpp"

namespace vtpage {

class VulkanContext;

namespace interop_detail {

// The push constants of shaders/indirection_scatter.comp, byte for byte.
struct IndirectionScatterPushConstants {
    std::uint64_t table;
    std::uint64_t values;
    std::uint64_t pages;
    std::uint32_t count;
    std::uint32_t padding;
};
static_assert(sizeof(IndirectionScatterPushConstants) == 32, "matches indirection_scatter.comp");

class IndirectionScatterPipeline {
public:
    static constexpr std::uint32_t group_size = 64;  // local_size_x of the shader

    explicit IndirectionScatterPipeline(VulkanContext& context);

    // Binds the pipeline and dispatches one invocation per entry (nothing for count 0).
    void record(VkCommandBuffer commands, const IndirectionScatterPushConstants& push) const;

private:
    VulkanComputePipeline pipeline_;
};

}  // namespace interop_detail
}  // namespace vtpage
