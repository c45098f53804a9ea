#include "window_loop.hpp"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "camera_path.hpp"
#include "frame_stats.hpp"
#include "hud.hpp"
#include "renderer/vulkan_swapchain.hpp"
#include "scene_flight.hpp"
#include "streaming_session.hpp"
#include "viewer_run.hpp"

namespace vtpage::viewer {

namespace {

using Clock = std::chrono::steady_clock;

// GLFW is initialised once per run and terminated at its end.
struct GlfwLibrary {
    bool ok = glfwInit() == GLFW_TRUE;
    ~GlfwLibrary() {
        if (ok) glfwTerminate();
    }
};

struct GlfwWindow {
    GLFWwindow* window = nullptr;
    ~GlfwWindow() {
        if (window) glfwDestroyWindow(window);
    }
};

// Input gathered by GLFW's callbacks between frames (the keys that toggle, the wheel, drags).
struct Input {
    double scroll = 0;
    bool cycle_mode = false;
    bool toggle_hud = false;
    bool next_path = false;
    bool reset = false;
    bool dragging = false;
    // Where the last cursor event put the cursor (a drag counts from there: the cursor's place
    // now may be further on, when the frame was slow and its events are still queued).
    bool cursor_seen = false;
    double last_x = 0, last_y = 0;
    double drag_x = 0, drag_y = 0;
    const Hud* hud = nullptr;
};

Input& input_of(GLFWwindow* window) {
    return *static_cast<Input*>(glfwGetWindowUserPointer(window));
}

void on_key(GLFWwindow* window, int key, int, int action, int) {
    Input& input = input_of(window);
    if (action != GLFW_PRESS || (input.hud && input.hud->wants_keyboard())) return;
    switch (key) {
        case GLFW_KEY_ESCAPE:
            glfwSetWindowShouldClose(window, GLFW_TRUE);
            break;
        case GLFW_KEY_M:
            input.cycle_mode = true;
            break;
        case GLFW_KEY_H:
            input.toggle_hud = true;
            break;
        case GLFW_KEY_P:
            input.next_path = true;
            break;
        case GLFW_KEY_R:
            input.reset = true;
            break;
        default:
            break;
    }
}

void on_scroll(GLFWwindow* window, double, double y) {
    Input& input = input_of(window);
    if (input.hud && input.hud->wants_mouse()) return;
    input.scroll += y;
}

void on_mouse_button(GLFWwindow* window, int button, int action, int) {
    Input& input = input_of(window);
    if (button != GLFW_MOUSE_BUTTON_LEFT) return;
    if (action == GLFW_PRESS && !(input.hud && input.hud->wants_mouse())) {
        input.dragging = true;
        if (!input.cursor_seen) glfwGetCursorPos(window, &input.last_x, &input.last_y);
    } else if (action == GLFW_RELEASE) {
        input.dragging = false;
    }
}

void on_cursor(GLFWwindow* window, double x, double y) {
    Input& input = input_of(window);
    if (input.dragging) {
        input.drag_x += x - input.last_x;
        input.drag_y += y - input.last_y;
    }
    input.cursor_seen = true;
    input.last_x = x;
    input.last_y = y;
}

bool key_down(GLFWwindow* window, int key) { return glfwGetKey(window, key) == GLFW_PRESS; }

// Flies the camera from the keys held and the input gathered since the last frame. Speeds
// follow the altitude, so that a second of flight looks the same at every level of detail.
void fly(GLFWwindow* window, Input& input, CameraPose& pose, double dt, PlaneExtent plane) {
    const bool fast =
        key_down(window, GLFW_KEY_LEFT_SHIFT) || key_down(window, GLFW_KEY_RIGHT_SHIFT);
    const double speed = pose.altitude * (fast ? 6.0 : 1.5) * dt;
    double forward = 0, right = 0;
    if (key_down(window, GLFW_KEY_W) || key_down(window, GLFW_KEY_UP)) forward += 1;
    if (key_down(window, GLFW_KEY_S) || key_down(window, GLFW_KEY_DOWN)) forward -= 1;
    if (key_down(window, GLFW_KEY_D) || key_down(window, GLFW_KEY_RIGHT)) right += 1;
    if (key_down(window, GLFW_KEY_A) || key_down(window, GLFW_KEY_LEFT)) right -= 1;
    pose.x += (std::sin(pose.yaw) * forward - std::cos(pose.yaw) * right) * speed;
    pose.z += (std::cos(pose.yaw) * forward + std::sin(pose.yaw) * right) * speed;
    double climb = 0;
    if (key_down(window, GLFW_KEY_E) || key_down(window, GLFW_KEY_PAGE_UP)) climb += 1;
    if (key_down(window, GLFW_KEY_Q) || key_down(window, GLFW_KEY_PAGE_DOWN)) climb -= 1;
    pose.altitude *= std::exp(climb * (fast ? 3.0 : 1.2) * dt);
    pose.altitude *= std::pow(0.85, input.scroll);
    pose.yaw -= input.drag_x * 0.004;
    pose.pitch -= input.drag_y * 0.004;
    input.scroll = input.drag_x = input.drag_y = 0;
    pose = clamp_pose(pose, plane);
}

// Pans and zooms the image view: a drag moves the image with the cursor, the wheel zooms about
// the cursor, keys pan and zoom at rates that follow the span.
void pan_image(GLFWwindow* window, Input& input, CameraPose& pose, double dt, PlaneExtent plane) {
    int width = 0, height = 0;
    glfwGetWindowSize(window, &width, &height);  // the cursor's units
    width = std::max(width, 1);
    height = std::max(height, 1);
    double half_x = 0, half_z = 0;
    image_half_extents(pose.altitude, double(width) / height, half_x, half_z);
    const double per_pixel = 2 * half_x / width;  // pixels are square
    pose.x -= input.drag_x * per_pixel;
    pose.z -= input.drag_y * per_pixel;
    if (input.scroll != 0) {
        double cursor_x = 0, cursor_y = 0;
        glfwGetCursorPos(window, &cursor_x, &cursor_y);
        const double x = pose.x + (2 * cursor_x / width - 1) * half_x;
        const double z = pose.z + (2 * cursor_y / height - 1) * half_z;
        pose = zoom_image_about(pose, std::pow(0.85, input.scroll), x, z);
    }
    const bool fast =
        key_down(window, GLFW_KEY_LEFT_SHIFT) || key_down(window, GLFW_KEY_RIGHT_SHIFT);
    const double speed = pose.altitude * (fast ? 2.0 : 0.6) * dt;
    double right = 0, down = 0;
    if (key_down(window, GLFW_KEY_D) || key_down(window, GLFW_KEY_RIGHT)) right += 1;
    if (key_down(window, GLFW_KEY_A) || key_down(window, GLFW_KEY_LEFT)) right -= 1;
    if (key_down(window, GLFW_KEY_S) || key_down(window, GLFW_KEY_DOWN)) down += 1;
    if (key_down(window, GLFW_KEY_W) || key_down(window, GLFW_KEY_UP)) down -= 1;
    pose.x += right * speed;
    pose.z += down * speed;
    double zoom_in = 0;
    if (key_down(window, GLFW_KEY_E) || key_down(window, GLFW_KEY_EQUAL) ||
        key_down(window, GLFW_KEY_KP_ADD) || key_down(window, GLFW_KEY_PAGE_UP)) {
        zoom_in += 1;
    }
    if (key_down(window, GLFW_KEY_Q) || key_down(window, GLFW_KEY_MINUS) ||
        key_down(window, GLFW_KEY_KP_SUBTRACT) || key_down(window, GLFW_KEY_PAGE_DOWN)) {
        zoom_in -= 1;
    }
    pose.altitude *= std::exp(-zoom_in * (fast ? 3.0 : 1.2) * dt);
    input.scroll = input.drag_x = input.drag_y = 0;
    pose = clamp_image_pose(pose, plane);
}

// Whether any of the keys that fly a scene's camera is held now.
bool flying_keys_held(GLFWwindow* window) {
    for (const int key :
         {GLFW_KEY_W, GLFW_KEY_A, GLFW_KEY_S, GLFW_KEY_D, GLFW_KEY_UP, GLFW_KEY_DOWN, GLFW_KEY_LEFT,
          GLFW_KEY_RIGHT, GLFW_KEY_Q, GLFW_KEY_E, GLFW_KEY_PAGE_UP, GLFW_KEY_PAGE_DOWN}) {
        if (key_down(window, key)) return true;
    }
    return false;
}

// What flies the scene's camera this frame: the keys held and the input gathered since the last
// frame (taken: the drag and the wheel start again from nothing).
FlightInput scene_flight_input(GLFWwindow* window, Input& input, double dt) {
    FlightInput flight;
    flight.seconds = dt;
    flight.look_x = input.drag_x;
    flight.look_y = input.drag_y;
    flight.wheel = input.scroll;
    input.scroll = input.drag_x = input.drag_y = 0;
    flight.forward = key_down(window, GLFW_KEY_W) || key_down(window, GLFW_KEY_UP);
    flight.back = key_down(window, GLFW_KEY_S) || key_down(window, GLFW_KEY_DOWN);
    flight.right = key_down(window, GLFW_KEY_D) || key_down(window, GLFW_KEY_RIGHT);
    flight.left = key_down(window, GLFW_KEY_A) || key_down(window, GLFW_KEY_LEFT);
    flight.up = key_down(window, GLFW_KEY_E) || key_down(window, GLFW_KEY_PAGE_UP);
    flight.down = key_down(window, GLFW_KEY_Q) || key_down(window, GLFW_KEY_PAGE_DOWN);
    flight.fast = key_down(window, GLFW_KEY_LEFT_SHIFT) || key_down(window, GLFW_KEY_RIGHT_SHIFT);
    return flight;
}

// Where the camera starts and R takes it back to.
CameraPose home_pose(View view, PlaneExtent plane, double aspect) {
    return view == View::image ? whole_image(plane, aspect) : starting_pose(plane);
}

}  // namespace

int run_window(const ViewerOptions& options, const Log& log,
               std::shared_ptr<const SessionScene> scene) {
    GlfwLibrary glfw;
    if (!glfw.ok) {
        std::fprintf(stderr,
                     "vtpage-viewer: cannot open a window (no display?): run with "
                     "--headless\n");
        return 1;
    }
    if (!glfwVulkanSupported()) {
        std::fprintf(stderr, "vtpage-viewer: GLFW finds no Vulkan loader: run with --headless\n");
        return 1;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    GlfwWindow window;
    window.window = glfwCreateWindow(int(options.width), int(options.height), "vtpage viewer",
                                     nullptr, nullptr);
    if (!window.window) {
        std::fprintf(stderr, "vtpage-viewer: cannot create a window: run with --headless\n");
        return 1;
    }
    Input input;
    glfwSetWindowUserPointer(window.window, &input);
    // Ours first: Dear ImGui's GLFW backend chains to them.
    glfwSetKeyCallback(window.window, on_key);
    glfwSetScrollCallback(window.window, on_scroll);
    glfwSetMouseButtonCallback(window.window, on_mouse_button);
    glfwSetCursorPosCallback(window.window, on_cursor);

    int width = 0, height = 0;
    glfwGetFramebufferSize(window.window, &width, &height);
    ViewerOptions sized = options;
    sized.width = std::uint32_t(std::max(width, 16));
    sized.height = std::uint32_t(std::max(height, 16));
    SessionSettings settings = session_settings(sized, log);
    settings.scene = std::move(scene);
    std::uint32_t extension_count = 0;
    const char** extensions = glfwGetRequiredInstanceExtensions(&extension_count);
    for (std::uint32_t i = 0; i < extension_count; ++i) {
        settings.instance_extensions.emplace_back(extensions[i]);
    }
    settings.create_surface = [&window](VkInstance instance) {
        VkSurfaceKHR surface = VK_NULL_HANDLE;
        if (glfwCreateWindowSurface(instance, window.window, nullptr, &surface) != VK_SUCCESS) {
            return VkSurfaceKHR(VK_NULL_HANDLE);
        }
        return surface;
    };
    StreamingSession session(std::move(settings));
    if (options.preload_all) session.preload_all(std::chrono::seconds(120));
    std::uint32_t image_width = sized.width, image_height = sized.height;
    FrameStats stats(options.warmup_frames);
    stats.set_budget_pages(session.budget_pages());
    double seconds = 0;
    {
        VulkanSwapchain swapchain(
            session.context(),
            {.width = image_width, .height = image_height, .vsync = options.vsync});
        Hud hud(session.context(), session.renderer().colour_format(), frames_in_flight);
        input.hud = &hud;
        ImGui_ImplGlfw_InitForVulkan(window.window, true);
        struct GlfwBackend {
            ~GlfwBackend() { ImGui_ImplGlfw_Shutdown(); }
        } glfw_backend;

        bool show_hud = options.hud.value_or(true);
        RenderMode mode = options.mode;
        const View view = options.view;
        const CameraPath* path =
            options.camera_path.empty() ? nullptr : find_camera_path(view, options.camera_path);
        // A scene starts with its first path playing (its own framing), then flies freely once
        // steered: from where the path is.
        const SceneBox* scene_box = view == View::scene ? session.scene_box() : nullptr;
        if (scene_box && !path) path = &camera_paths(view).front();
        SceneFlight flight;
        if (scene_box) flight = take_over_scene_flight(path->at(0, *scene_box), *scene_box);
        double path_time = 0;
        Camera camera;
        camera.projection = projection_of(view);
        camera.pose = home_pose(view, session.plane_extent(), double(image_width) / image_height);
        double last_gpu_ms = 0;
        const auto start = Clock::now();
        auto last = start;
        auto last_counters = start;
        auto frame_start = start;
        finish_early_on_interrupt();
        bool ended = false;  // the last frame is drawn (SIGINT, Esc or the count)
        for (std::uint64_t frame = 0; !ended && !glfwWindowShouldClose(window.window) &&
                                      (options.frames == 0 || frame < options.frames);
             ++frame) {
            glfwPollEvents();
            glfwGetFramebufferSize(window.window, &width, &height);
            if (width <= 0 || height <= 0) {  // minimised
                glfwWaitEventsTimeout(0.1);
                continue;
            }
            if (std::uint32_t(width) != image_width || std::uint32_t(height) != image_height ||
                swapchain.out_of_date()) {
                image_width = std::uint32_t(width);
                image_height = std::uint32_t(height);
                session.resize(image_width, image_height);
                swapchain.recreate(image_width, image_height);
                hud.forget_targets();
            }
            const auto now = Clock::now();
            const double dt = std::chrono::duration<double>(now - last).count();
            last = now;
            if (input.cycle_mode) {
                mode = RenderMode((std::uint32_t(mode) + 1) % 3);
                input.cycle_mode = false;
            }
            if (input.toggle_hud) {
                show_hud = !show_hud;
                input.toggle_hud = false;
            }
            // The view jumps when a path starts, on R, and at the path's own cuts.
            bool after_cut = false;
            if (input.next_path) {  // manual -> each path in turn -> manual
                const auto& paths = camera_paths(view);
                if (!path) {
                    path = &paths.front();
                } else {
                    const std::size_t index = std::size_t(path - paths.data()) + 1;
                    path = index < paths.size() ? &paths[index] : nullptr;
                }
                path_time = 0;
                input.next_path = false;
                after_cut = path != nullptr;
                // The last path gives way to free flight around a scene, from where it was.
                if (scene_box && !path) {
                    flight = take_over_scene_flight(camera.pose, *scene_box, flight.speed);
                }
            }
            if (input.reset) {
                path = nullptr;
                after_cut = true;
                camera.pose =
                    home_pose(view, session.plane_extent(), double(image_width) / image_height);
                if (scene_box) {  // the first path's start, flown freely at the base speed
                    flight = take_over_scene_flight(camera_paths(view).front().at(0, *scene_box),
                                                    *scene_box);
                }
                input.reset = false;
            }
            if (scene_box) {
                if (path) {
                    path_time += dt;
                    camera = scene_camera(path->at(path_time, *scene_box), *scene_box);
                    // Any flying takes over from the path, where it is (nothing jumps); a drag
                    // begun and ended between two frames too.
                    const bool dragged = input.dragging || input.drag_x != 0 || input.drag_y != 0;
                    if (dragged || input.scroll != 0 || flying_keys_held(window.window)) {
                        flight = take_over_scene_flight(camera.pose, *scene_box, flight.speed);
                        path = nullptr;
                    }
                }
                if (!path) {
                    flight =
                        fly_scene(flight, scene_flight_input(window.window, input, dt), *scene_box);
                    camera = scene_flight_camera(flight, *scene_box);
                }
            } else if (path) {
                after_cut = after_cut || path->cut_between(path_time, path_time + dt);
                path_time += dt;
                camera.pose =
                    path->at(path_time, session.plane_extent(), double(image_width) / image_height);
                // Any flying takes over from the path, where it is.
                const bool steering =
                    input.dragging || input.scroll != 0 || key_down(window.window, GLFW_KEY_W) ||
                    key_down(window.window, GLFW_KEY_S) || key_down(window.window, GLFW_KEY_A) ||
                    key_down(window.window, GLFW_KEY_D);
                if (steering) path = nullptr;
            }
            if (scene_box) {
                // flown above
            } else if (!path && view == View::image) {
                pan_image(window.window, input, camera.pose, dt, session.plane_extent());
            } else if (!path) {
                fly(window.window, input, camera.pose, dt, session.plane_extent());
            }

            SessionFrame desc;
            desc.view_projection = camera.view_projection(double(image_width) / image_height);
            desc.mode = mode;
            desc.present_to = &swapchain;
            // The last frame: the count reached, the window asked to close (Esc) by the events
            // just polled, or SIGINT.
            const bool last_frame = (options.frames != 0 && frame + 1 == options.frames) ||
                                    glfwWindowShouldClose(window.window) || interrupt_requested();
            ended = last_frame;
            desc.capture = last_frame && !options.screenshot.empty();
            ImGui_ImplGlfw_NewFrame();
            hud.begin_frame(dt, image_width, image_height, true);
            if (show_hud) {
                HudData data;
                data.backend = session.backend_name();
                data.device = session.device_name();
                data.texture = session.texture_name();
                data.camera = path ? path->name : scene_box ? "free flight" : "manual";
                data.scene = scene_box != nullptr;
                data.flight_speed = flight.speed;
                data.stats = &stats;
                data.counters = session.counters();
                data.budget_pages = session.budget_pages();
                data.gpu_ms = last_gpu_ms;
                data.pose = camera.pose;
                data.mode = mode;
                data.validation = options.validation;
                data.window = true;
                hud.build(data);
                desc.overlay = [&hud](VkCommandBuffer commands, const OverlayTarget& target) {
                    hud.record(commands, target);
                };
            } else {
                ImGui::EndFrame();
            }
            const double submitted_at = std::chrono::duration<double>(Clock::now() - start).count();
            const std::vector<CompletedSummary> completed = session.render(desc);
            // Before its completions: the frame just submitted may be among them.
            stats.record_submitted(session.renderer().frames_submitted(), submitted_at, after_cut);
            for (const CompletedSummary& done : completed) {
                stats.record_completed(done);
                last_gpu_ms = done.gpu_ms;
            }
            const auto after = Clock::now();
            stats.record_frame(std::chrono::duration<double>(after - frame_start).count() * 1000.0);
            frame_start = after;
            if (std::chrono::duration<double>(after - last_counters).count() >= 0.05) {
                stats.record_counters(std::chrono::duration<double>(after - start).count(),
                                      session.counters());
                last_counters = after;
            }
        }
        seconds = std::chrono::duration<double>(Clock::now() - start).count();
        for (const CompletedSummary& done : session.finish()) stats.record_completed(done);
        input.hud = nullptr;
    }
    return finish_run(options, session, stats, seconds, false, stdout);
}

}  // namespace vtpage::viewer
