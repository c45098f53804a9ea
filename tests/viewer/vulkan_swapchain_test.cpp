// Presenting to a window: a GLFW window's surface, the swapchain, frames blitted and presented,
// a resize. Needs a display (run under Xvfb: xvfb-run -a <this binary>); skipped without one.
#include <gtest/gtest.h>

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <cstdlib>

#include "../interop/vulkan_test_support.hpp"
#include "../support/backend_fixture.hpp"
#include "renderer/vulkan_swapchain.hpp"
#include "renderer_rig.hpp"

namespace vtpage {
namespace {

using namespace vtpage::viewer;  // the renderer under test

class VulkanSwapchainTest : public testing::Test {
protected:
    void SetUp() override {
        if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) {
            GTEST_SKIP() << "no display (DISPLAY is not set): run under xvfb-run";
        }
        if (!glfwInit()) GTEST_SKIP() << "GLFW cannot start on this display";
        initialised = true;
        if (!glfwVulkanSupported()) GTEST_SKIP() << "GLFW finds no Vulkan loader";
        glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
        window = glfwCreateWindow(int(test::rig_width), int(test::rig_height), "vtpage test",
                                  nullptr, nullptr);
        ASSERT_NE(window, nullptr);
    }
    void TearDown() override {
        if (window) glfwDestroyWindow(window);
        if (initialised) glfwTerminate();
    }
    VulkanContextSettings window_settings() {
        VulkanContextSettings settings;
        std::uint32_t count = 0;
        const char** names = glfwGetRequiredInstanceExtensions(&count);
        for (std::uint32_t i = 0; i < count; ++i)
            settings.instance_extensions.emplace_back(names[i]);
        settings.create_surface = [this](VkInstance instance) {
            VkSurfaceKHR surface = VK_NULL_HANDLE;
            if (glfwCreateWindowSurface(instance, window, nullptr, &surface) != VK_SUCCESS) {
                return VkSurfaceKHR(VK_NULL_HANDLE);
            }
            return surface;
        };
        return settings;
    }
    bool initialised = false;
    GLFWwindow* window = nullptr;
};

TEST_F(VulkanSwapchainTest, PresentsFramesAndSurvivesAResize) {
    std::string reason;
    auto backend = test::try_make_backend("host", reason);
    ASSERT_TRUE(backend) << reason;
    auto context = test::try_make_vulkan_context(*backend, reason, window_settings());
    if (!context) GTEST_SKIP() << "no Vulkan device that presents here: " << reason;
    ASSERT_NE(context->surface(), VK_NULL_HANDLE);
    {
        VulkanPageImporter importer(*context, *backend);
        VulkanIndirectionTable indirection(*context, importer, {.page_count = 64});
        VulkanTextureDirectory textures(*context);
        textures.set(0, 0, test::rig_size_log2);
        VulkanRenderer renderer(*context, indirection, textures,
                                {.width = test::rig_width, .height = test::rig_height});
        VulkanSwapchain swapchain(*context, {.width = test::rig_width, .height = test::rig_height});
        EXPECT_GE(swapchain.image_count(), 2u);
        EXPECT_NE(swapchain.format(), VK_FORMAT_UNDEFINED);
        int presented = 0;
        const auto view = test::OrthoView::at_lod(1.0f, 0.2f, 0.2f);
        for (int frame = 0; frame < 6; ++frame) {
            if (frame == 3) {
                glfwSetWindowSize(window, 96, 64);
                glfwPollEvents();
                swapchain.recreate(96, 64);
                renderer.resize(96, 64);
            }
            FrameDesc desc;
            desc.view_projection = view.matrix();
            desc.present_to = &swapchain;
            auto done = renderer.render(desc);
            if (done && done->presented) ++presented;
            glfwPollEvents();
        }
        for (const CompletedFrame& done : renderer.finish()) presented += done.presented;
        EXPECT_GE(presented, 4) << "frames were presented";
    }
    test::expect_no_validation_messages(*context);
}

}  // namespace
}  // namespace vtpage
