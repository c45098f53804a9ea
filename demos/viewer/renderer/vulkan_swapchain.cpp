#include "renderer/vulkan_swapchain.hpp"

#include <algorithm>
#include <vector>

#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage::viewer {

struct VulkanSwapchain::State {
    VulkanContext& context;
    VulkanSwapchainSettings settings;
    UniqueVkSwapchain swapchain;
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkExtent2D extent{};
    std::vector<VkImage> images;
    std::vector<UniqueVkSemaphore> render_finished;
    bool out_of_date = false;

    State(VulkanContext& c, VulkanSwapchainSettings s) : context(c), settings(s) {}
    void create(std::uint32_t width, std::uint32_t height);
};

void VulkanSwapchain::State::create(std::uint32_t width, std::uint32_t height) {
    VkPhysicalDevice physical = context.physical_device();
    VkSurfaceKHR surface = context.surface();
    VkSurfaceCapabilitiesKHR capabilities{};
    vk_check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(physical, surface, &capabilities),
             "VulkanSwapchain", "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
    std::uint32_t count = 0;
    vk_check(vkGetPhysicalDeviceSurfaceFormatsKHR(physical, surface, &count, nullptr),
             "VulkanSwapchain", "vkGetPhysicalDeviceSurfaceFormatsKHR");
    std::vector<VkSurfaceFormatKHR> formats(count);
    vk_check(vkGetPhysicalDeviceSurfaceFormatsKHR(physical, surface, &count, formats.data()),
             "VulkanSwapchain", "vkGetPhysicalDeviceSurfaceFormatsKHR");
    if (formats.empty()) {
        throw Error(Errc::not_supported, "VulkanSwapchain", "the surface offers no format");
    }
    // UNORM: the texels are already display-encoded, so no sRGB conversion on the blit.
    VkSurfaceFormatKHR chosen = formats.front();
    for (const VkSurfaceFormatKHR& candidate : formats) {
        if ((candidate.format == VK_FORMAT_B8G8R8A8_UNORM ||
             candidate.format == VK_FORMAT_R8G8B8A8_UNORM) &&
            candidate.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) {
            chosen = candidate;
            break;
        }
    }
    vk_check(vkGetPhysicalDeviceSurfacePresentModesKHR(physical, surface, &count, nullptr),
             "VulkanSwapchain", "vkGetPhysicalDeviceSurfacePresentModesKHR");
    std::vector<VkPresentModeKHR> modes(count);
    vk_check(vkGetPhysicalDeviceSurfacePresentModesKHR(physical, surface, &count, modes.data()),
             "VulkanSwapchain", "vkGetPhysicalDeviceSurfacePresentModesKHR");
    VkPresentModeKHR mode = VK_PRESENT_MODE_FIFO_KHR;  // always offered
    if (!settings.vsync) {
        for (VkPresentModeKHR wanted :
             {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR}) {
            if (std::find(modes.begin(), modes.end(), wanted) != modes.end()) {
                mode = wanted;
                break;
            }
        }
    }
    VkExtent2D size = capabilities.currentExtent;
    if (size.width == UINT32_MAX) {
        size.width =
            std::clamp(width, capabilities.minImageExtent.width, capabilities.maxImageExtent.width);
        size.height = std::clamp(height, capabilities.minImageExtent.height,
                                 capabilities.maxImageExtent.height);
    }
    std::uint32_t image_count = std::max(settings.min_images, capabilities.minImageCount);
    if (capabilities.maxImageCount) image_count = std::min(image_count, capabilities.maxImageCount);

    VkSwapchainCreateInfoKHR create{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    create.surface = surface;
    create.minImageCount = image_count;
    create.imageFormat = chosen.format;
    create.imageColorSpace = chosen.colorSpace;
    create.imageExtent = size;
    create.imageArrayLayers = 1;
    create.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    create.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    create.preTransform = capabilities.currentTransform;
    create.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
    if (!(capabilities.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR)) {
        create.compositeAlpha = VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR;
    }
    create.presentMode = mode;
    create.clipped = VK_TRUE;
    create.oldSwapchain = swapchain.get();
    VkSwapchainKHR raw = VK_NULL_HANDLE;
    vk_check(vkCreateSwapchainKHR(context.device(), &create, nullptr, &raw), "VulkanSwapchain",
             "vkCreateSwapchainKHR", detail::concat(size.width, "x", size.height));
    swapchain = UniqueVkSwapchain(context.device(), raw);  // the old one goes now
    format = chosen.format;
    extent = size;
    vk_check(vkGetSwapchainImagesKHR(context.device(), raw, &count, nullptr), "VulkanSwapchain",
             "vkGetSwapchainImagesKHR");
    images.resize(count);
    vk_check(vkGetSwapchainImagesKHR(context.device(), raw, &count, images.data()),
             "VulkanSwapchain", "vkGetSwapchainImagesKHR");
    render_finished.clear();
    for (std::uint32_t i = 0; i < count; ++i) {
        VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        VkSemaphore semaphore = VK_NULL_HANDLE;
        vk_check(vkCreateSemaphore(context.device(), &semaphore_info, nullptr, &semaphore),
                 "VulkanSwapchain", "vkCreateSemaphore");
        render_finished.emplace_back(context.device(), semaphore);
    }
    out_of_date = false;
}

VulkanSwapchain::VulkanSwapchain(VulkanContext& context, VulkanSwapchainSettings settings)
    : state_(std::make_unique<State>(context, settings)) {
    if (!context.surface()) {
        throw Error(Errc::invalid_argument, "VulkanSwapchain",
                    "the context has no surface (VulkanContextSettings::create_surface)");
    }
    state_->create(settings.width, settings.height);
}

VulkanSwapchain::~VulkanSwapchain() {
    try {
        state_->context.wait_idle();
    } catch (const Error& error) {
        state_->context.log().error("vulkan swapchain: waiting for the queue: ", error.what());
    }
}

void VulkanSwapchain::recreate(std::uint32_t width, std::uint32_t height) {
    state_->context.wait_idle();
    state_->create(width, height);
}

bool VulkanSwapchain::out_of_date() const noexcept { return state_->out_of_date; }
VkSwapchainKHR VulkanSwapchain::get() const noexcept { return state_->swapchain.get(); }
VkFormat VulkanSwapchain::format() const noexcept { return state_->format; }
VkExtent2D VulkanSwapchain::extent() const noexcept { return state_->extent; }
std::uint32_t VulkanSwapchain::image_count() const noexcept {
    return static_cast<std::uint32_t>(state_->images.size());
}
VkImage VulkanSwapchain::image(std::uint32_t index) const { return state_->images.at(index); }
VkSemaphore VulkanSwapchain::render_finished(std::uint32_t index) const {
    return state_->render_finished.at(index).get();
}

std::optional<std::uint32_t> VulkanSwapchain::acquire(VkSemaphore acquired) {
    std::uint32_t index = 0;
    const VkResult result = vkAcquireNextImageKHR(state_->context.device(), state_->swapchain.get(),
                                                  UINT64_MAX, acquired, VK_NULL_HANDLE, &index);
    if (result == VK_ERROR_OUT_OF_DATE_KHR) {
        state_->out_of_date = true;
        return std::nullopt;
    }
    vk_check(result, "VulkanSwapchain::acquire", "vkAcquireNextImageKHR");
    if (result == VK_SUBOPTIMAL_KHR) state_->out_of_date = true;  // still usable this once
    return index;
}

bool VulkanSwapchain::present(std::uint32_t index) {
    VkSemaphore wait = state_->render_finished.at(index).get();
    VkSwapchainKHR swapchain = state_->swapchain.get();
    VkPresentInfoKHR info{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    info.waitSemaphoreCount = 1;
    info.pWaitSemaphores = &wait;
    info.swapchainCount = 1;
    info.pSwapchains = &swapchain;
    info.pImageIndices = &index;
    const VkResult result = state_->context.present(info);
    if (result == VK_ERROR_OUT_OF_DATE_KHR || result == VK_SUBOPTIMAL_KHR) {
        state_->out_of_date = true;
        return false;
    }
    return true;
}

}  // namespace vtpage::viewer
