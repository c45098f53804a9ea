// Free flight around a mesh scene (--scene in a window): a drag turns the view, keys move the
// camera along it, at a speed scaled to the scene's bounds. Plain values in, a pose out: no
// window system here, so that the tests drive it (window_loop.cpp reads GLFW into FlightInput).
//
// The flight starts where a camera path is when the user takes over (take_over_scene_flight), so
// nothing jumps. Whatever the input (NaN, 1e30, a negative time), the pose stays finite, the
// pitch short of straight up or down and the eye within max_flight_distance of the scene's
// centre, where scene_camera's depth range is sound.
#pragma once

#include "camera.hpp"

namespace vtpage::viewer {

// What the user did since the last step.
struct FlightInput {
    double seconds = 0;             // since the last step
    double look_x = 0, look_y = 0;  // the drag, in pixels: to the right, down
    double wheel = 0;               // notches, away from the user positive: faster
    bool forward = false, back = false, left = false, right = false;
    bool up = false, down = false;  // along the world's y
    bool fast = false;              // Shift
};

struct SceneFlight {
    CameraPose pose;   // the eye (x, altitude as y, z), yaw and pitch as camera.hpp has them
    double speed = 1;  // world units per second, before Shift
};

// Radians of yaw and pitch per pixel of drag (the plane view's).
inline constexpr double flight_look_per_pixel = 0.004;
// The steepest a flight looks up or down: 89.5 degrees.
inline constexpr double flight_max_pitch = 1.5620696805349924;
// Shift's factor on the speed; the wheel's per notch; the range either way of the base speed.
inline constexpr double flight_fast_factor = 4.0;
inline constexpr double flight_wheel_factor = 1.25;
inline constexpr double flight_speed_range = 64.0;
// The longest step taken at once: a stall (a window being moved) does not fling the camera.
inline constexpr double flight_max_step_seconds = 0.25;
// The most drag taken in one step, in pixels.
inline constexpr double flight_max_look_pixels = 8192.0;
// The base speed crosses the scene's box (its diagonal) in this time.
inline constexpr double flight_crossing_seconds = 4.0;

// The base speed around this box: its diagonal in flight_crossing_seconds.
double scene_flight_speed(const SceneBox& box);
// How far from the box's centre a flight may go: 64 radii (the paths frame it at 2.1).
double max_flight_distance(const SceneBox& box);

// A flight from `pose` (where a path is), unchanged unless it is not finite (then the orbit's
// start) or outside the flight's range (then brought within it). `speed`: the speed to keep (a
// flight taken over again keeps the one the wheel set); 0 or not finite: the base speed.
SceneFlight take_over_scene_flight(const CameraPose& pose, const SceneBox& box, double speed = 0);

// One step: the drag turns (yaw and pitch), the wheel changes the speed, the keys move the eye,
// forward and back along the view, sideways level with the ground, up and down along y.
SceneFlight fly_scene(const SceneFlight& flight, const FlightInput& input, const SceneBox& box);

// The camera of a flight: scene_camera's depth range for its pose.
Camera scene_flight_camera(const SceneFlight& flight, const SceneBox& box);

}  // namespace vtpage::viewer
