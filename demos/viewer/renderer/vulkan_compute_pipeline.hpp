// A compute pipeline of the viewer's renderer: one shader, its push constants and nothing else
// (no descriptors: the shaders reach their buffers by device address), dispatched over the
// pixels of an image in 8 x 8 work groups.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

class ComputePipeline {
public:
    // The shader's local size must be group_side x group_side.
    static constexpr std::uint32_t group_side = 8;

    ComputePipeline(VulkanContext& context, std::span<const std::uint32_t> spirv,
                    std::uint32_t push_bytes, const char* name);

    // Binds, pushes `push` (push_bytes of it) and dispatches one invocation per pixel of a
    // width x height image.
    void dispatch(VkCommandBuffer commands, const void* push, std::uint32_t width,
                  std::uint32_t height) const;

private:
    std::uint32_t push_bytes_ = 0;
    UniqueVkPipelineLayout layout_;
    UniqueVkPipeline pipeline_;
};

}  // namespace vtpage::viewer
