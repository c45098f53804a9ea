// What one frame in flight owns while the device runs it: its two command buffers (the first
// part, submitted and signalled apart so that its feedback can be read before the rest is done,
// and the rest), its timestamp queries and the semaphore a swapchain signals when the frame's
// image is acquired.
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

    struct Commands {
        VkCommandBuffer first = VK_NULL_HANDLE;  // submitted first: uploads, the feedback pass
        VkCommandBuffer rest = VK_NULL_HANDLE;
    };
    // Resets the slot's command pool (its last frame must be complete) and begins recording
    // both command buffers.
    Commands begin();
    VkSemaphore image_acquired() const noexcept { return image_acquired_.get(); }

    // Timestamps around the frame (the start in the first command buffer, the end in the rest)
    // and around its textured pass; no-ops where the queue has
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
    Commands commands_;  // freed with the pool
    UniqueVkQueryPool timestamps_;
    UniqueVkSemaphore image_acquired_;
    double timestamp_period_ns_ = 0;
    bool timestamps_written_ = false;
};

}  // namespace vtpage::viewer
