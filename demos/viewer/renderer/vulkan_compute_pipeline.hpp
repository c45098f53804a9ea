// A compute pass of the viewer's renderer over the pixels of an image: a
// VulkanComputePipeline (one shader and its push constants, no descriptors) dispatched in
// 8 x 8 work groups.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_compute_pipeline.hpp"

namespace vtpage::viewer {

class ComputePipeline {
public:
    // The shader's local size must be group_side x group_side.
    static constexpr std::uint32_t group_side = 8;

    ComputePipeline(VulkanContext& context, std::span<const std::uint32_t> spirv,
                    std::uint32_t push_bytes, const char* name)
        : pipeline_(context, spirv, push_bytes, name) {}

    // Binds, pushes `push` (the pipeline's push_bytes of it) and dispatches one invocation per
    // pixel of a width x height image.
    void dispatch(VkCommandBuffer commands, const void* push, std::uint32_t width,
                  std::uint32_t height) const {
        pipeline_.dispatch(
            commands, std::span(static_cast<const std::byte*>(push), pipeline_.push_bytes()),
            (width + group_side - 1) / group_side, (height + group_side - 1) / group_side);
    }

private:
    VulkanComputePipeline pipeline_;
};

}  // namespace vtpage::viewer
