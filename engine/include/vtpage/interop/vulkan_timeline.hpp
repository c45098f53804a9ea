// A Vulkan timeline semaphore: a 64-bit counter the device (or the host, or CUDA) raises and
// others wait for. Made exportable, it can be handed to CUDA as an fd (CudaVulkanTimeline).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "vtpage/base/unique_fd.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {

class VulkanContext;

class VulkanTimeline {
public:
    // exportable: OPAQUE_FD export (needs VK_KHR_external_semaphore_fd; not_supported otherwise).
    VulkanTimeline(VulkanContext& context, std::uint64_t initial_value = 0, bool exportable = false,
                   const char* name = nullptr);

    VkSemaphore get() const noexcept { return semaphore_.get(); }
    // The current value (vkGetSemaphoreCounterValue).
    std::uint64_t value() const;
    // Waits until the value reaches `value`; false on timeout.
    bool wait(std::uint64_t value, std::uint64_t timeout_ns = UINT64_MAX) const;
    // Raises the value from the host.
    void signal(std::uint64_t value);
    // A new fd for the semaphore (OPAQUE_FD); the caller owns it.
    UniqueFd export_fd() const;

private:
    VulkanContext* context_ = nullptr;
    UniqueVkSemaphore semaphore_;
    bool exportable_ = false;
};

}  // namespace vtpage
