#include "scene_flight.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "camera_path.hpp"

namespace vtpage::viewer {

namespace {

bool finite(const CameraPose& pose) {
    return std::isfinite(pose.x) && std::isfinite(pose.altitude) && std::isfinite(pose.z) &&
           std::isfinite(pose.yaw) && std::isfinite(pose.pitch);
}

// A value within [-limit, limit]; 0 when it is not a number.
double bounded(double value, double limit) {
    return std::isnan(value) ? 0.0 : std::clamp(value, -limit, limit);
}

// The eye brought back onto the sphere of max_flight_distance around the centre when it is
// beyond it.
CameraPose within_range(CameraPose pose, const SceneBox& box) {
    const auto c = box.centre();
    const double offset[3] = {pose.x - c[0], pose.altitude - c[1], pose.z - c[2]};
    const double distance = std::hypot(offset[0], offset[1], offset[2]);
    const double limit = max_flight_distance(box);
    if (distance > limit) {
        const double scale = limit / distance;
        pose.x = c[0] + offset[0] * scale;
        pose.altitude = c[1] + offset[1] * scale;
        pose.z = c[2] + offset[2] * scale;
    }
    return pose;
}

double clamp_speed(double speed, const SceneBox& box) {
    const double base = scene_flight_speed(box);
    if (!std::isfinite(speed) || speed <= 0) return base;
    return std::clamp(speed, base / flight_speed_range, base * flight_speed_range);
}

}  // namespace

double scene_flight_speed(const SceneBox& box) {
    return 2 * box.radius() / flight_crossing_seconds;
}

double max_flight_distance(const SceneBox& box) { return 64 * box.radius(); }

SceneFlight take_over_scene_flight(const CameraPose& pose, const SceneBox& box, double speed) {
    SceneFlight flight{.pose = pose, .speed = clamp_speed(speed, box)};
    if (!finite(flight.pose)) flight.pose = camera_paths(View::scene).front().at(0, box);
    flight.pose.pitch = std::clamp(flight.pose.pitch, -flight_max_pitch, flight_max_pitch);
    flight.pose = within_range(flight.pose, box);
    return flight;
}

SceneFlight fly_scene(const SceneFlight& flight, const FlightInput& input, const SceneBox& box) {
    const SceneFlight start = take_over_scene_flight(flight.pose, box, flight.speed);
    SceneFlight next = start;
    // Turning: dragging right turns right, dragging down looks down (as over the plane).
    CameraPose& pose = next.pose;
    pose.yaw -= bounded(input.look_x, flight_max_look_pixels) * flight_look_per_pixel;
    pose.yaw = std::remainder(pose.yaw, 2 * std::numbers::pi);
    pose.pitch -= bounded(input.look_y, flight_max_look_pixels) * flight_look_per_pixel;
    pose.pitch = std::clamp(pose.pitch, -flight_max_pitch, flight_max_pitch);
    const double notches = bounded(input.wheel, 64);
    next.speed = clamp_speed(next.speed * std::pow(flight_wheel_factor, notches), box);

    // Moving: the keys held give a direction, walked at the speed (diagonals no faster).
    const double seconds =
        std::isnan(input.seconds) ? 0.0 : std::clamp(input.seconds, 0.0, flight_max_step_seconds);
    const double ahead = double(input.forward) - double(input.back);
    const double aside = double(input.right) - double(input.left);
    const double rise = double(input.up) - double(input.down);
    const double forward[3] = {std::sin(pose.yaw) * std::cos(pose.pitch), std::sin(pose.pitch),
                               std::cos(pose.yaw) * std::cos(pose.pitch)};
    const double right[3] = {-std::cos(pose.yaw), 0, std::sin(pose.yaw)};  // screen right
    double move[3] = {forward[0] * ahead + right[0] * aside, forward[1] * ahead + rise,
                      forward[2] * ahead + right[2] * aside};
    const double length = std::hypot(move[0], move[1], move[2]);
    if (length > 0 && seconds > 0) {
        const double step = next.speed * (input.fast ? flight_fast_factor : 1.0) * seconds / length;
        pose.x += move[0] * step;
        pose.altitude += move[1] * step;
        pose.z += move[2] * step;
    }
    pose = within_range(pose, box);
    // Nothing above lets a NaN through; should anything, the last pose stays.
    if (!finite(pose) || !std::isfinite(next.speed)) return start;
    return next;
}

Camera scene_flight_camera(const SceneFlight& flight, const SceneBox& box) {
    return scene_camera(take_over_scene_flight(flight.pose, box, flight.speed).pose, box);
}

}  // namespace vtpage::viewer
