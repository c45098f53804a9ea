// One frame of VirtualTextureStreaming as an app runs it, for the facade's tests: begun in a
// one-off command buffer, submitted with the frame's waits and signals, waited for, completed
// with its feedback (or left for the test to complete).
#pragma once

#include <vulkan/vulkan.h>

#include <span>

#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage::test {

// Records, submits and waits for one frame of `streaming` (its uploads alone), without completing
// it; its upload.
inline StreamingFrame submit_streaming_frame(VulkanContext& context,
                                             VirtualTextureStreaming& streaming,
                                             VkCommandPool pool) {
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    vk_check(vkAllocateCommandBuffers(context.device(), &allocate, &commands), "test", "allocate");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk_check(vkBeginCommandBuffer(commands, &begin), "test", "begin");
    StreamingFrame frame = streaming.begin_frame(commands, 0);
    vk_check(vkEndCommandBuffer(commands), "test", "end");
    VkCommandBufferSubmitInfo buffer{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    buffer.commandBuffer = commands;
    VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submit.waitSemaphoreInfoCount = std::uint32_t(frame.waits().size());
    submit.pWaitSemaphoreInfos = frame.waits().data();
    submit.commandBufferInfoCount = 1;
    submit.pCommandBufferInfos = &buffer;
    submit.signalSemaphoreInfoCount = std::uint32_t(frame.signals().size());
    submit.pSignalSemaphoreInfos = frame.signals().data();
    context.submit(submit);
    frame.submitted();
    context.wait_idle();
    vkFreeCommandBuffers(context.device(), pool, 1, &commands);
    return frame;
}

// One whole frame: submitted, waited for, completed with `feedback`; its upload.
inline IndirectionUpload run_streaming_frame(VulkanContext& context,
                                             VirtualTextureStreaming& streaming, VkCommandPool pool,
                                             std::span<const vt::FeedbackEntry> feedback = {}) {
    StreamingFrame frame = submit_streaming_frame(context, streaming, pool);
    streaming.complete_frame(frame.id(), feedback);
    return frame.upload();
}

}  // namespace vtpage::test
