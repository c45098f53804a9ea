// Pipeline barriers in one call: the ordering between two uses of memory (or of an image) in a
// command buffer that the library's uploads, the viewer and an embedding app record again and
// again, without spelling out the barrier and dependency structures each time.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace vtpage {

// Records a global memory barrier: what `src_stages` did through `src_access` comes before, and
// its writes are visible to, what `dst_stages` does through `dst_access`.
void record_memory_barrier(VkCommandBuffer commands, VkPipelineStageFlags2 src_stages,
                           VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stages,
                           VkAccessFlags2 dst_access);

// Records an image barrier on the first `levels` mip levels and the first layer of an image (of
// its `aspect`: colour, or depth for a depth target): the same ordering, and the image's layout
// changed from `from` to `to` (no queue family transfer).
void record_image_barrier(VkCommandBuffer commands, VkImage image, VkImageLayout from,
                          VkImageLayout to, VkPipelineStageFlags2 src_stages,
                          VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stages,
                          VkAccessFlags2 dst_access, std::uint32_t levels = 1,
                          VkImageAspectFlags aspect = VK_IMAGE_ASPECT_COLOR_BIT);

}  // namespace vtpage
