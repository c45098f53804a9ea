// A compute pipeline whose only inputs are push constants: its shader reaches its buffers by
// device address, so there are no descriptors to bind. The library's indirection scatter, the
// viewer's deferred passes and test shaders are made this way.
//
//   VulkanComputePipeline scatter(context, spirv, sizeof(Push), "my scatter");
//   scatter.dispatch(commands, std::as_bytes(std::span(&push, 1)), groups);
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

class VulkanComputePipeline {
public:
    // `push_bytes`: the size of the shader's push constants (at most the device's limit, 128
    // bytes everywhere); `name` names the pipeline for debuggers and errors.
    VulkanComputePipeline(VulkanContext& context, std::span<const std::uint32_t> spirv,
                          std::uint32_t push_bytes, const char* name);

    // Binds the pipeline, pushes `push` (push_bytes of it, else Errc::invalid_argument) and
    // dispatches groups_x x groups_y x groups_z work groups (none when one of them is 0).
    void dispatch(VkCommandBuffer commands, std::span<const std::byte> push, std::uint32_t groups_x,
                  std::uint32_t groups_y = 1, std::uint32_t groups_z = 1) const;
    template <class Push>
    void dispatch(VkCommandBuffer commands, const Push& push, std::uint32_t groups_x,
                  std::uint32_t groups_y = 1, std::uint32_t groups_z = 1) const {
        dispatch(commands, std::as_bytes(std::span(&push, 1)), groups_x, groups_y, groups_z);
    }

    std::uint32_t push_bytes() const noexcept { return push_bytes_; }
    VkPipeline get() const noexcept { return pipeline_.get(); }

private:
    std::uint32_t push_bytes_ = 0;
    const char* name_ = "";
    UniqueVkPipelineLayout layout_;
    UniqueVkPipeline pipeline_;
};

}  // namespace vtpage
