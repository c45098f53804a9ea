#include "renderer/vulkan_frame_slot.hpp"

#include <vector>

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage::viewer {

FrameSlot::FrameSlot(VulkanContext& context) : device_(context.device()) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pool_info.queueFamilyIndex = context.queue_family();
    VkCommandPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateCommandPool(device_, &pool_info, nullptr, &pool), "FrameSlot",
             "vkCreateCommandPool");
    pool_ = UniqueVkCommandPool(device_, pool);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 2;
    VkCommandBuffer buffers[2] = {};
    vk_check(vkAllocateCommandBuffers(device_, &allocate, buffers), "FrameSlot",
             "vkAllocateCommandBuffers");
    commands_ = {buffers[0], buffers[1]};

    VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore semaphore = VK_NULL_HANDLE;
    vk_check(vkCreateSemaphore(device_, &semaphore_info, nullptr, &semaphore), "FrameSlot",
             "vkCreateSemaphore");
    image_acquired_ = UniqueVkSemaphore(device_, semaphore);

    std::uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &family_count,
                                             families.data());
    if (families.at(context.queue_family()).timestampValidBits > 0 &&
        context.properties().limits.timestampPeriod > 0) {
        VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        query_info.queryCount = query_count;
        VkQueryPool queries = VK_NULL_HANDLE;
        vk_check(vkCreateQueryPool(device_, &query_info, nullptr, &queries), "FrameSlot",
                 "vkCreateQueryPool");
        timestamps_ = UniqueVkQueryPool(device_, queries);
        timestamp_period_ns_ = context.properties().limits.timestampPeriod;
    }
}

FrameSlot::Commands FrameSlot::begin() {
    vk_check(vkResetCommandPool(device_, pool_.get(), 0), "FrameSlot::begin", "vkResetCommandPool");
    VkCommandBufferBeginInfo begin_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin_info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    for (VkCommandBuffer commands : {commands_.first, commands_.rest}) {
        vk_check(vkBeginCommandBuffer(commands, &begin_info), "FrameSlot::begin",
                 "vkBeginCommandBuffer");
    }
    timestamps_written_ = false;
    return commands_;
}

void FrameSlot::write_start_timestamp(VkCommandBuffer commands) {
    if (!timestamps_) return;
    vkCmdResetQueryPool(commands, timestamps_.get(), 0, query_count);
    vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_NONE, timestamps_.get(), frame_start);
}

// The pass's start waits for the commands before it (ALL_COMMANDS), so that upload copies
// recorded earlier do not count as sampling time.
void FrameSlot::write_textured_pass_start(VkCommandBuffer commands) {
    if (!timestamps_) return;
    vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, timestamps_.get(),
                         textured_start);
}

void FrameSlot::write_textured_pass_end(VkCommandBuffer commands) {
    if (!timestamps_) return;
    vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, timestamps_.get(),
                         textured_end);
}

void FrameSlot::write_end_timestamp(VkCommandBuffer commands) {
    if (!timestamps_) return;
    vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, timestamps_.get(),
                         frame_end);
    timestamps_written_ = true;
}

FrameSlot::GpuTimes FrameSlot::gpu_times() const {
    if (!timestamps_ || !timestamps_written_) return {};
    std::uint64_t ticks[query_count] = {};
    const VkResult result =
        vkGetQueryPoolResults(device_, timestamps_.get(), 0, query_count, sizeof(ticks), ticks,
                              sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT);
    if (result != VK_SUCCESS) return {};
    const auto ms = [&](std::uint32_t from, std::uint32_t to) {
        return ticks[to] < ticks[from]
                   ? 0.0
                   : double(ticks[to] - ticks[from]) * timestamp_period_ns_ * 1e-6;
    };
    return {ms(frame_start, frame_end), ms(textured_start, textured_end)};
}

}  // namespace vtpage::viewer
