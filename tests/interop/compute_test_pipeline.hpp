// A test's own compute shader whose only inputs are push constants (buffer device addresses and
// counts): its pipeline, and dispatches whose writes the host reads afterwards.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "vtpage/interop/vulkan_compute_pipeline.hpp"
#include "vtpage/interop/vulkan_context.hpp"

namespace vtpage::test {

class ComputeTestPipeline {
public:
    // `group_size` is the shader's local_size_x; `push_bytes` the size of its push constants.
    ComputeTestPipeline(VulkanContext& context, std::span<const std::uint32_t> spirv,
                        std::uint32_t push_bytes, std::uint32_t group_size, const char* name);

    // Records enough work groups for `invocations` with `push` (push_bytes, else
    // Errc::invalid_argument from VulkanComputePipeline), then a barrier that makes the shader's
    // writes visible to the host.
    void record(VkCommandBuffer commands, std::span<const std::byte> push,
                std::uint32_t invocations) const;
    template <class Push>
    void record(VkCommandBuffer commands, const Push& push, std::uint32_t invocations) const {
        record(commands, std::as_bytes(std::span(&push, 1)), invocations);
    }

    // record() in a submission of its own, waited for.
    template <class Push>
    void run(const Push& push, std::uint32_t invocations) {
        context_.run_commands(
            [&](VkCommandBuffer commands) { record(commands, push, invocations); });
    }

private:
    VulkanContext& context_;
    std::uint32_t group_size_;
    VulkanComputePipeline pipeline_;
};

}  // namespace vtpage::test
