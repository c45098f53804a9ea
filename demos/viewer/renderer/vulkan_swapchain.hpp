// The swapchain of a window surface (VulkanContextSettings::create_surface), for the renderer
// to present into: it blits its offscreen image to the acquired image and presents it.
//
//   VulkanSwapchain swapchain(context, {.width = w, .height = h});
//   frame.present_to = &swapchain;  renderer.render(frame);
//   if (swapchain.out_of_date()) swapchain.recreate(new_w, new_h);
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace vtpage {
class VulkanContext;
}

namespace vtpage::viewer {

struct VulkanSwapchainSettings {
    std::uint32_t width = 1280;  // used where the surface leaves the size to us
    std::uint32_t height = 720;
    bool vsync = true;  // FIFO; off: MAILBOX, else IMMEDIATE, where offered
    std::uint32_t min_images = 3;
};

class VulkanSwapchain {
public:
    // invalid_argument when the context has no surface.
    VulkanSwapchain(VulkanContext& context, VulkanSwapchainSettings settings = {});
    // Waits for the queue, then destroys the swapchain.
    ~VulkanSwapchain();
    VulkanSwapchain(const VulkanSwapchain&) = delete;
    VulkanSwapchain& operator=(const VulkanSwapchain&) = delete;

    // For a new window size (waits for the queue first).
    void recreate(std::uint32_t width, std::uint32_t height);
    // An acquire or present said the swapchain no longer matches the surface.
    bool out_of_date() const noexcept;

    VkSwapchainKHR get() const noexcept;
    VkFormat format() const noexcept;
    VkExtent2D extent() const noexcept;
    std::uint32_t image_count() const noexcept;
    VkImage image(std::uint32_t index) const;
    // Signalled by the frame that renders into image `index`, waited for by its presentation.
    VkSemaphore render_finished(std::uint32_t index) const;

    // The next image, signalling `acquired` when it is ready; nothing when out of date.
    std::optional<std::uint32_t> acquire(VkSemaphore acquired);
    // Presents image `index` once render_finished(index) is signalled; false when out of date
    // or suboptimal (recreate then).
    bool present(std::uint32_t index);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::viewer
