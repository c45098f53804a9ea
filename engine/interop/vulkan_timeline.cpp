#include "vtpage/interop/vulkan_timeline.hpp"

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"

namespace vtpage {

VulkanTimeline::VulkanTimeline(VulkanContext& context, std::uint64_t initial_value, bool exportable,
                               const char* name)
    : context_(&context), exportable_(exportable) {
    if (exportable && !context.supports_semaphore_fd()) {
        throw Error(Errc::not_supported, "VulkanTimeline",
                    "an exportable semaphore needs VK_KHR_external_semaphore_fd");
    }
    VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = initial_value;
    if (exportable) type.pNext = &export_info;
    VkSemaphoreCreateInfo create{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    VkSemaphore raw = VK_NULL_HANDLE;
    vk_check(vkCreateSemaphore(context.device(), &create, nullptr, &raw), "VulkanTimeline",
             "vkCreateSemaphore", detail::concat("exportable=", exportable));
    semaphore_ = UniqueVkSemaphore(context.device(), raw);
    if (name)
        context.set_name(VK_OBJECT_TYPE_SEMAPHORE, reinterpret_cast<std::uint64_t>(raw), name);
}

std::uint64_t VulkanTimeline::value() const {
    std::uint64_t value = 0;
    vk_check(vkGetSemaphoreCounterValue(context_->device(), semaphore_.get(), &value),
             "VulkanTimeline::value", "vkGetSemaphoreCounterValue");
    return value;
}

bool VulkanTimeline::wait(std::uint64_t value, std::uint64_t timeout_ns) const {
    VkSemaphore semaphore = semaphore_.get();
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &semaphore;
    info.pValues = &value;
    const VkResult result =
        vk_check(vkWaitSemaphores(context_->device(), &info, timeout_ns), "VulkanTimeline::wait",
                 "vkWaitSemaphores", detail::concat("value=", value));
    return result == VK_SUCCESS;
}

void VulkanTimeline::signal(std::uint64_t value) {
    VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    info.semaphore = semaphore_.get();
    info.value = value;
    vk_check(vkSignalSemaphore(context_->device(), &info), "VulkanTimeline::signal",
             "vkSignalSemaphore", detail::concat("value=", value));
}

UniqueFd VulkanTimeline::export_fd() const {
    if (!exportable_) {
        throw Error(Errc::not_supported, "VulkanTimeline::export_fd",
                    "the semaphore was not made exportable");
    }
    VkSemaphoreGetFdInfoKHR info{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    info.semaphore = semaphore_.get();
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    vk_check(context_->functions().get_semaphore_fd(context_->device(), &info, &fd),
             "VulkanTimeline::export_fd", "vkGetSemaphoreFdKHR");
    return UniqueFd(fd);
}

}  // namespace vtpage
