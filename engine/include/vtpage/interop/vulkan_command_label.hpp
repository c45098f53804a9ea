// A labelled region of a command buffer for the scope's life (vkCmdBeginDebugUtilsLabelEXT and
// vkCmdEndDebugUtilsLabelEXT), shown by RenderDoc, Nsight and validation messages; nothing
// where the context has no debug utils.
//
//   { VulkanCommandLabel label(context, commands, "feedback pass"); ... record ... }
#pragma once

#include <vulkan/vulkan.h>

#include "vtpage/interop/vulkan_context.hpp"

namespace vtpage {

class VulkanCommandLabel {
public:
    VulkanCommandLabel(const VulkanContext& context, VkCommandBuffer commands, const char* name)
        : context_(context), commands_(commands) {
        context_.begin_label(commands_, name);
    }
    ~VulkanCommandLabel() { context_.end_label(commands_); }
    VulkanCommandLabel(const VulkanCommandLabel&) = delete;
    VulkanCommandLabel& operator=(const VulkanCommandLabel&) = delete;

private:
    const VulkanContext& context_;
    VkCommandBuffer commands_;
};

}  // namespace vtpage
