// The heads-up display: a Dear ImGui window over the image with the frame time (and its graph),
// residency against the budget, commits, evictions and pages streamed per second, the pool's
// statistics, the streamer's queue, the backend and the device. Drawn into the renderer's colour
// image through its overlay hook (FrameDesc::overlay), so that it is in screenshots too. Needs no
// window: headless runs draw it when asked (--hud); in a window the GLFW platform backend feeds
// it input (window_loop.cpp).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>

#include "camera.hpp"
#include "frame_stats.hpp"
#include "renderer/vulkan_renderer.hpp"
#include "streaming_session.hpp"

namespace vtpage::viewer {

struct HudData {
    // camera: the path's name, "manual" (the plane, the image) or "free flight" (a scene)
    std::string backend, device, texture, camera;
    const FrameStats* stats = nullptr;
    SessionCounters counters;
    std::size_t budget_pages = 0;
    double gpu_ms = 0;  // of the last completed frame
    CameraPose pose;
    RenderMode mode = RenderMode::textured;
    bool validation = false;
    bool window = false;  // show the controls
    bool scene = false;   // a mesh scene (--scene): its camera and controls instead of the plane's
    double flight_speed = 0;  // in a window, the scene's flight: units per second, before Shift
};

class Hud {
public:
    // `frames_in_flight`: the renderer's; the HUD keeps one more set of vertex buffers, so that
    // a frame's buffers are rewritten only once the device has finished with them.
    Hud(VulkanContext& context, VkFormat colour_format, std::uint32_t frames_in_flight);
    ~Hud();
    Hud(const Hud&) = delete;
    Hud& operator=(const Hud&) = delete;

    // Starts a frame of the HUD over an image of this size. In a window, call
    // ImGui_ImplGlfw_NewFrame() first (it sets the size from the window and feeds input).
    void begin_frame(double seconds_since_last, std::uint32_t width, std::uint32_t height,
                     bool window_platform);
    void build(const HudData& data);
    // The overlay hook: records the HUD's draw lists into the image.
    void record(VkCommandBuffer commands, const OverlayTarget& target);
    // The renderer made new images (a resize): framebuffers over the old ones go.
    void forget_targets();

    bool wants_mouse() const;
    bool wants_keyboard() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace vtpage::viewer
