// Free flight around a mesh scene: it starts at the path's pose it takes over from, moves at its
// speed along the view, turns by the drag and stops short of looking straight up or down, keeps
// a sound depth range wherever it is, and no input (NaN, 1e30, time running backwards) puts
// anything but finite numbers into the view matrix.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "camera_path.hpp"
#include "scene_flight.hpp"

namespace vtpage::viewer {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

// A box away from the origin, longer than it is high.
const SceneBox box{.min = {-3, 10, 40}, .max = {5, 12, 46}};

bool finite(const CameraPose& pose) {
    return std::isfinite(pose.x) && std::isfinite(pose.altitude) && std::isfinite(pose.z) &&
           std::isfinite(pose.yaw) && std::isfinite(pose.pitch);
}

void expect_same(const CameraPose& a, const CameraPose& b) {
    EXPECT_DOUBLE_EQ(a.x, b.x);
    EXPECT_DOUBLE_EQ(a.altitude, b.altitude);
    EXPECT_DOUBLE_EQ(a.z, b.z);
    EXPECT_DOUBLE_EQ(a.yaw, b.yaw);
    EXPECT_DOUBLE_EQ(a.pitch, b.pitch);
}

// The difference of two angles, within (-pi, pi].
double angle_between(double a, double b) { return std::remainder(a - b, 2 * std::numbers::pi); }

double distance_to_centre(const CameraPose& pose) {
    const auto c = box.centre();
    return std::hypot(pose.x - c[0], pose.altitude - c[1], pose.z - c[2]);
}

// The camera's depth range is positive and ordered, and its view matrix finite.
void expect_sound_camera(const SceneFlight& flight) {
    const Camera camera = scene_flight_camera(flight, box);
    EXPECT_GT(camera.near_plane, 0);
    EXPECT_LT(camera.near_plane, camera.far_plane);
    EXPECT_TRUE(std::isfinite(camera.far_plane));
    for (const float value : camera.view_projection(16.0 / 9)) EXPECT_TRUE(std::isfinite(value));
}

SceneFlight orbit_flight(double t = 5.0) {
    return take_over_scene_flight(find_camera_path(View::scene, "orbit")->at(t, box), box);
}

TEST(SceneFlightTest, StartsAtThePosesOfThePathsItTakesOverFrom) {
    for (const CameraPath& path : camera_paths(View::scene)) {
        for (double t = 0; t <= path.seconds * 2; t += 0.7) {
            SCOPED_TRACE(path.name + " at " + std::to_string(t));
            const CameraPose pose = path.at(t, box);
            const SceneFlight flight = take_over_scene_flight(pose, box);
            expect_same(flight.pose, pose);
            EXPECT_DOUBLE_EQ(flight.speed, scene_flight_speed(box));
            // The same picture as the path's, the same depth range.
            const Camera from_path = scene_camera(pose, box);
            const Camera flown = scene_flight_camera(flight, box);
            EXPECT_EQ(flown.view_projection(16.0 / 9), from_path.view_projection(16.0 / 9));
            // A step with nothing held changes nothing.
            const SceneFlight still = fly_scene(flight, {.seconds = 1.0 / 60}, box);
            EXPECT_NEAR(still.pose.x, pose.x, 1e-12 * distance_to_centre(pose));
            EXPECT_NEAR(still.pose.altitude, pose.altitude, 1e-12 * distance_to_centre(pose));
            EXPECT_NEAR(still.pose.z, pose.z, 1e-12 * distance_to_centre(pose));
            EXPECT_NEAR(angle_between(still.pose.yaw, pose.yaw), 0, 1e-12);
            EXPECT_DOUBLE_EQ(still.pose.pitch, pose.pitch);
        }
    }
    // A speed set before is kept; one out of range is brought into it.
    const CameraPose pose = find_camera_path(View::scene, "orbit")->at(3, box);
    const double base = scene_flight_speed(box);
    EXPECT_DOUBLE_EQ(take_over_scene_flight(pose, box, base * 3).speed, base * 3);
    EXPECT_DOUBLE_EQ(take_over_scene_flight(pose, box, base * 1e9).speed,
                     base * flight_speed_range);
    EXPECT_DOUBLE_EQ(take_over_scene_flight(pose, box, nan).speed, base);
    EXPECT_DOUBLE_EQ(take_over_scene_flight(pose, box, -1).speed, base);
}

TEST(SceneFlightTest, TheBaseSpeedCrossesTheSceneInAFewSeconds) {
    const double diagonal = 2 * box.radius();
    EXPECT_NEAR(diagonal / scene_flight_speed(box), flight_crossing_seconds, 1e-9);
    EXPECT_GE(flight_crossing_seconds, 2);
    EXPECT_LE(flight_crossing_seconds, 8);
}

TEST(SceneFlightTest, ForwardMovesAtTheSpeedAlongTheView) {
    const SceneFlight flight = orbit_flight();
    const CameraPose& p = flight.pose;
    const double v[3] = {std::sin(p.yaw) * std::cos(p.pitch), std::sin(p.pitch),
                         std::cos(p.yaw) * std::cos(p.pitch)};
    for (const bool fast : {false, true}) {
        const double speed = flight.speed * (fast ? flight_fast_factor : 1.0);
        // One step of 0.2 s, and a second in 60 steps.
        const SceneFlight one =
            fly_scene(flight, {.seconds = 0.2, .forward = true, .fast = fast}, box);
        SceneFlight many = flight;
        for (int i = 0; i < 60; ++i) {
            many = fly_scene(many, {.seconds = 1.0 / 60, .forward = true, .fast = fast}, box);
        }
        for (const auto& [moved, t] : {std::pair{one, 0.2}, std::pair{many, 1.0}}) {
            SCOPED_TRACE(std::to_string(t) + (fast ? " s, fast" : " s"));
            EXPECT_NEAR(moved.pose.x, p.x + v[0] * speed * t, 1e-9);
            EXPECT_NEAR(moved.pose.altitude, p.altitude + v[1] * speed * t, 1e-9);
            EXPECT_NEAR(moved.pose.z, p.z + v[2] * speed * t, 1e-9);
            EXPECT_DOUBLE_EQ(moved.pose.pitch, p.pitch);
            EXPECT_NEAR(angle_between(moved.pose.yaw, p.yaw), 0, 1e-12);
        }
    }
    // Back is the other way; forward and back together stay.
    const SceneFlight back = fly_scene(flight, {.seconds = 0.2, .back = true}, box);
    EXPECT_NEAR(back.pose.x, p.x - v[0] * flight.speed * 0.2, 1e-9);
    EXPECT_NEAR(back.pose.altitude, p.altitude - v[1] * flight.speed * 0.2, 1e-9);
    const SceneFlight both =
        fly_scene(flight, {.seconds = 0.2, .forward = true, .back = true}, box);
    expect_same(both.pose,
                {p.x, p.altitude, p.z, std::remainder(p.yaw, 2 * std::numbers::pi), p.pitch});
}

TEST(SceneFlightTest, SidewaysIsLevelAndToTheScreensRightUpIsAlongY) {
    const SceneFlight flight = orbit_flight();
    const CameraPose& p = flight.pose;
    const double t = 0.1, s = flight.speed;
    const SceneFlight right = fly_scene(flight, {.seconds = t, .right = true}, box);
    EXPECT_NEAR(right.pose.altitude, p.altitude, 1e-12);
    EXPECT_NEAR(std::hypot(right.pose.x - p.x, right.pose.z - p.z), s * t, 1e-9);
    // Screen right: positive clip x for a point moved that way from the middle of the view.
    const auto m = scene_flight_camera(flight, box).view_projection(16.0 / 9);
    const double dx = right.pose.x - p.x, dz = right.pose.z - p.z;
    const double ahead[3] = {p.x + std::sin(p.yaw) * std::cos(p.pitch) + dx,
                             p.altitude + std::sin(p.pitch),
                             p.z + std::cos(p.yaw) * std::cos(p.pitch) + dz};
    const double w = m[3] * ahead[0] + m[7] * ahead[1] + m[11] * ahead[2] + m[15];
    const double clip_x = (m[0] * ahead[0] + m[4] * ahead[1] + m[8] * ahead[2] + m[12]) / w;
    EXPECT_GT(clip_x, 0);
    const SceneFlight left = fly_scene(flight, {.seconds = t, .left = true}, box);
    EXPECT_NEAR(left.pose.x - p.x, -dx, 1e-9);
    EXPECT_NEAR(left.pose.z - p.z, -dz, 1e-9);
    const SceneFlight up = fly_scene(flight, {.seconds = t, .up = true}, box);
    EXPECT_NEAR(up.pose.altitude, p.altitude + s * t, 1e-9);
    EXPECT_DOUBLE_EQ(up.pose.x, p.x);
    EXPECT_DOUBLE_EQ(up.pose.z, p.z);
    const SceneFlight down = fly_scene(flight, {.seconds = t, .down = true}, box);
    EXPECT_NEAR(down.pose.altitude, p.altitude - s * t, 1e-9);
    // Diagonals are no faster.
    const SceneFlight diagonal =
        fly_scene(flight, {.seconds = t, .forward = true, .right = true, .up = true}, box);
    EXPECT_NEAR(std::hypot(diagonal.pose.x - p.x, diagonal.pose.altitude - p.altitude,
                           diagonal.pose.z - p.z),
                s * t, 1e-9);
}

TEST(SceneFlightTest, TheDragTurnsByItsPixelsAndThePitchStopsShortOfStraightUpOrDown) {
    const SceneFlight flight = orbit_flight();
    const CameraPose& p = flight.pose;
    const SceneFlight turned =
        fly_scene(flight, {.seconds = 0.01, .look_x = 50, .look_y = -30}, box);
    EXPECT_NEAR(angle_between(turned.pose.yaw, p.yaw), -50 * flight_look_per_pixel, 1e-12);
    EXPECT_NEAR(turned.pose.pitch, p.pitch + 30 * flight_look_per_pixel, 1e-12);
    EXPECT_DOUBLE_EQ(turned.pose.x, p.x);
    EXPECT_DOUBLE_EQ(turned.pose.altitude, p.altitude);
    EXPECT_DOUBLE_EQ(turned.pose.z, p.z);
    // Yaw stays a small angle however far it turns.
    SceneFlight spun = flight;
    for (int i = 0; i < 1000; ++i) spun = fly_scene(spun, {.look_x = 4000}, box);
    EXPECT_LE(std::abs(spun.pose.yaw), std::numbers::pi);
    // Pitch: never straight up or down, however far dragged.
    for (const double drag : {1e3, 1e6, -1e3, -1e6}) {
        SceneFlight looked = fly_scene(flight, {.look_y = drag}, box);
        looked = fly_scene(looked, {.look_y = drag}, box);
        EXPECT_DOUBLE_EQ(std::abs(looked.pose.pitch), flight_max_pitch) << drag;
        EXPECT_LT(std::abs(looked.pose.pitch), std::numbers::pi / 2);
        expect_sound_camera(looked);
    }
}

TEST(SceneFlightTest, TheWheelChangesTheSpeedWithinItsRange) {
    const SceneFlight flight = orbit_flight();
    const double base = scene_flight_speed(box);
    EXPECT_NEAR(fly_scene(flight, {.wheel = 2}, box).speed, base * 1.25 * 1.25, 1e-12 * base);
    EXPECT_NEAR(fly_scene(flight, {.wheel = -1}, box).speed, base / 1.25, 1e-12 * base);
    EXPECT_DOUBLE_EQ(fly_scene(flight, {.wheel = 1e30}, box).speed, base * flight_speed_range);
    EXPECT_DOUBLE_EQ(fly_scene(flight, {.wheel = -1e30}, box).speed, base / flight_speed_range);
    EXPECT_DOUBLE_EQ(fly_scene(flight, {.wheel = nan}, box).speed, base);
    EXPECT_DOUBLE_EQ(fly_scene(flight, {.wheel = inf}, box).speed, base * flight_speed_range);
    // The faster speed is what forward moves at.
    const SceneFlight faster = fly_scene(flight, {.wheel = 3}, box);
    const SceneFlight moved = fly_scene(faster, {.seconds = 0.1, .forward = true}, box);
    EXPECT_NEAR(std::hypot(moved.pose.x - faster.pose.x, moved.pose.altitude - faster.pose.altitude,
                           moved.pose.z - faster.pose.z),
                faster.speed * 0.1, 1e-9);
}

TEST(SceneFlightTest, BadInputLeavesThePoseFiniteAndUnchangedOrClamped) {
    const SceneFlight flight = orbit_flight();
    const CameraPose& p = flight.pose;
    const double wrapped_yaw = std::remainder(p.yaw, 2 * std::numbers::pi);
    // Time that is not a number, or runs backwards: no movement.
    for (const double seconds : {nan, -1.0, -inf, -1e30}) {
        SCOPED_TRACE(seconds);
        const SceneFlight after = fly_scene(
            flight, {.seconds = seconds, .forward = true, .right = true, .up = true}, box);
        expect_same(after.pose, {p.x, p.altitude, p.z, wrapped_yaw, p.pitch});
        expect_sound_camera(after);
    }
    // Endless time: one step at most.
    for (const double seconds : {inf, 1e30, 10.0}) {
        SCOPED_TRACE(seconds);
        const SceneFlight after = fly_scene(flight, {.seconds = seconds, .forward = true}, box);
        ASSERT_TRUE(finite(after.pose));
        EXPECT_NEAR(
            std::hypot(after.pose.x - p.x, after.pose.altitude - p.altitude, after.pose.z - p.z),
            flight.speed * flight_max_step_seconds, 1e-9);
        expect_sound_camera(after);
    }
    // A drag that is not a number: no turn; a huge one: a clamped pitch and a finite yaw.
    const SceneFlight not_a_drag = fly_scene(flight, {.look_x = nan, .look_y = nan}, box);
    expect_same(not_a_drag.pose, {p.x, p.altitude, p.z, wrapped_yaw, p.pitch});
    for (const double drag : {1e30, -1e30, inf, -inf}) {
        SCOPED_TRACE(drag);
        const SceneFlight after = fly_scene(flight, {.look_x = drag, .look_y = drag}, box);
        ASSERT_TRUE(finite(after.pose));
        EXPECT_EQ(std::abs(after.pose.pitch), flight_max_pitch);
        EXPECT_LE(std::abs(after.pose.yaw), std::numbers::pi);
        expect_sound_camera(after);
    }
    // Everything bad at once, for many steps.
    SceneFlight flown = flight;
    for (int i = 0; i < 100; ++i) {
        flown = fly_scene(flown,
                          {.seconds = i % 2 ? inf : nan,
                           .look_x = i % 3 ? 1e30 : nan,
                           .look_y = -1e30,
                           .wheel = i % 2 ? inf : nan,
                           .forward = true,
                           .up = true,
                           .fast = true},
                          box);
        ASSERT_TRUE(finite(flown.pose)) << i;
        ASSERT_TRUE(std::isfinite(flown.speed)) << i;
        expect_sound_camera(flown);
    }
    // A pose that is not finite to begin with (none is given, but whatever comes in): the
    // orbit's start.
    const SceneFlight lost = take_over_scene_flight({nan, 1, inf, 0, 0}, box);
    expect_same(lost.pose, find_camera_path(View::scene, "orbit")->at(0, box));
    expect_sound_camera(fly_scene({.pose = {nan, nan, nan, nan, nan}, .speed = nan}, {}, box));
}

TEST(SceneFlightTest, TheDepthRangeIsSoundInsideTheBoxAndFarOutsideIt) {
    const auto c = box.centre();
    const double r = box.radius();
    // The centre, a corner, just outside, the framing distance, far away, absurdly far away.
    for (const double d : {0.0, 0.5, 1.0, 1.01, 2.1, 10.0, 63.0, 64.0, 100.0, 1e6, 1e300}) {
        for (const auto& direction : {std::array<double, 3>{1, 0, 0},
                                      {0, 1, 0},
                                      {0, -1, 0},
                                      {0.6, 0.48, -0.64},
                                      {-0.6, 0, 0.8}}) {
            SCOPED_TRACE("distance " + std::to_string(d) + " radii");
            const CameraPose pose{c[0] + direction[0] * d * r, c[1] + direction[1] * d * r,
                                  c[2] + direction[2] * d * r, 1.0, -0.3};
            const SceneFlight flight = take_over_scene_flight(pose, box);
            EXPECT_LE(distance_to_centre(flight.pose), max_flight_distance(box) * (1 + 1e-12));
            expect_sound_camera(flight);
            // Flying on outwards stays within range.
            SceneFlight away = flight;
            for (int i = 0; i < 50; ++i) {
                away = fly_scene(away, {.seconds = 0.25, .back = true, .fast = true}, box);
                expect_sound_camera(away);
            }
            EXPECT_LE(distance_to_centre(away.pose), max_flight_distance(box) * (1 + 1e-12));
        }
    }
    // Within the range, the whole box is within the depth range whichever way the camera looks.
    for (const double d : {0.0, 0.7, 3.0, 64.0}) {
        const CameraPose pose{c[0] + d * r, c[1], c[2], 0.4, 0.1};
        const Camera camera = scene_flight_camera(take_over_scene_flight(pose, box), box);
        const double nearest = std::max(d * r - r, 0.0), farthest = d * r + r;
        EXPECT_LE(camera.near_plane, std::max(nearest, camera.far_plane * 1e-3) + 1e-9) << d;
        EXPECT_GE(camera.far_plane, farthest) << d;
    }
}

}  // namespace
}  // namespace vtpage::viewer
