// What one frame in flight owns while the device runs it: its command buffer, its timestamp
// queries and the semaphore a swapchain signals when the frame's image is acquired.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

class FrameSlot {
public:
    explicit FrameSlot(VulkanContext& context);
    FrameSlot(FrameSlot&&) noexcept = default;

    // Resets the slot's command pool (its last frame must be complete) and begins recording.
    VkCommandBuffer begin();
    VkCommandBuffer commands() const noexcept { return commands_; }
    VkSemaphore image_acquired() const noexcept { return image_acquired_.get(); }

    // Timestamps around the frame and around its textured pass; no-ops where the queue has
    // none. The textured pass is timed apart because it is where sampling costs show.
    void write_start_timestamp(VkCommandBuffer commands);
    void write_textured_pass_start(VkCommandBuffer commands);
    void write_textured_pass_end(VkCommandBuffer commands);
    void write_end_timestamp(VkCommandBuffer commands);
    // Milliseconds of the whole frame and of its textured pass, once the frame is complete;
    // 0 without timestamps.
    struct GpuTimes {
        double frame_ms = 0;
        double textured_pass_ms = 0;
    };
    GpuTimes gpu_times() const;

private:
    enum Query : std::uint32_t {
        frame_start,
        textured_start,
        textured_end,
        frame_end,
        query_count
    };

    VkDevice device_ = VK_NULL_HANDLE;
    UniqueVkCommandPool pool_;
    VkCommandBuffer commands_ = VK_NULL_HANDLE;  // freed with the pool
    UniqueVkQueryPool timestamps_;
    UniqueVkSemaphore image_acquired_;
    double timestamp_period_ns_ = 0;
    bool timestamps_written_ = false;
};

}  // namespace vtpage::viewer
