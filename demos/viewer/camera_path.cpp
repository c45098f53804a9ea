#include "camera_path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace vtpage::viewer {

namespace {

constexpr double pi = std::numbers::pi;

double smoothstep(double t) {
    t = std::clamp(t, 0.0, 1.0);
    return t * t * (3 - 2 * t);
}

// Geometric interpolation: altitudes change by the same factor each second.
double log_lerp(double a, double b, double t) {
    return std::exp(std::log(a) + (std::log(b) - std::log(a)) * t);
}

// A pose at `altitude` looking at ground point (x, z) from direction `yaw` with `pitch`.
CameraPose looking_at(double x, double z, double altitude, double yaw, double pitch) {
    const double distance = altitude / std::tan(-pitch);
    return {x - std::sin(yaw) * distance, altitude, z - std::cos(yaw) * distance, yaw, pitch};
}

// A pose at `distance` from the scene's centre in direction (yaw angle around y, elevation),
// looking at the centre.
CameraPose around_scene(const SceneBox& box, double distance, double angle, double elevation) {
    const auto c = box.centre();
    const double x = c[0] + std::sin(angle) * std::cos(elevation) * distance;
    const double y = c[1] + std::sin(elevation) * distance;
    const double z = c[2] + std::cos(angle) * std::cos(elevation) * distance;
    return {x, y, z, angle + pi, -elevation};
}

// The distance at which the scene's bounding sphere fits a 60-degree view, with a margin.
double framing_distance(const SceneBox& box) { return box.radius() * 2.1; }

constexpr double orbit_seconds = 24;
constexpr double approach_seconds = 16;

CameraPose orbit(double t, const SceneBox& box) {
    const double angle = 2 * pi * t / orbit_seconds + 0.6;
    return around_scene(box, framing_distance(box), angle, 0.35 + 0.2 * std::sin(2 * angle));
}

// How far from the box's centre the line towards (angle, elevation), as around_scene takes
// them, leaves the box.
double leaving_distance(const SceneBox& box, double angle, double elevation) {
    const double direction[3] = {std::sin(angle) * std::cos(elevation), std::sin(elevation),
                                 std::cos(angle) * std::cos(elevation)};
    double distance = std::numeric_limits<double>::infinity();
    for (int axis = 0; axis < 3; ++axis) {
        const double half = 0.5 * (box.max[axis] - box.min[axis]);
        if (direction[axis] != 0) distance = std::min(distance, half / std::abs(direction[axis]));
    }
    return distance;
}

CameraPose approach(double t, const SceneBox& box) {
    // In over 7 s, held 2 s, out over 7 s, turning a quarter of the way round; never into the
    // box (a long one reaches beyond a third of the framing distance on some sides).
    const double in = smoothstep(t / 7.0) - smoothstep((t - 9.0) / 7.0);
    const double angle = 0.6 + 0.5 * pi * t / approach_seconds, elevation = 0.3;
    const double distance =
        std::max(log_lerp(framing_distance(box), framing_distance(box) * 0.35, in),
                 1.1 * leaving_distance(box, angle, elevation));
    return around_scene(box, distance, angle, elevation);
}

constexpr double flythrough_seconds = 20;

// Low over the scene along its longer horizontal axis, weaving across the other, looking ahead
// and a little down: the scene's parts pass close by one after another, so that a large scene
// streams all the way (and a scene of one object is flown over, never into).
CameraPose flythrough(double t, const SceneBox& box) {
    const auto c = box.centre();
    const double half_x = 0.5 * (box.max[0] - box.min[0]), half_z = 0.5 * (box.max[2] - box.min[2]);
    const bool along_x = half_x >= half_z;
    const double along = along_x ? half_x : half_z, across = along_x ? half_z : half_x;
    const double phase = 2 * pi * t / flythrough_seconds;
    const double a = -0.85 * along * std::cos(0.5 * phase);  // one way per pass, eased
    const double b = 0.3 * across * std::sin(phase);
    const double da = 0.425 * along * std::sin(0.5 * phase) + 1e-3 * along;  // d/d(phase)
    const double db = 0.3 * across * std::cos(phase);
    const double height = box.max[1] - box.min[1];
    const double altitude = box.max[1] + std::max(0.35 * height, 0.05 * box.radius());
    const double x = c[0] + (along_x ? a : b), z = c[2] + (along_x ? b : a);
    const double yaw = along_x ? std::atan2(da, db) : std::atan2(db, da);
    return {x, altitude, z, yaw, -0.3};
}

constexpr double overview_seconds = 24;
constexpr double dive_seconds = 12;
constexpr double dive_moving_seconds = 10;  // then still
constexpr double benchmark_seconds = 10;

CameraPose overview(double t, PlaneExtent extent, double /*aspect*/) {
    const double plane = extent.larger();
    // Around the centre, looking inwards, one turn per pass; low on one side, high on the other.
    const double angle = 2 * pi * t / overview_seconds;
    const double height = 0.5 - 0.5 * std::cos(angle);  // 0 .. 1 .. 0
    const double altitude = log_lerp(plane * 0.25, plane * 0.01, height);
    const double yaw = angle + pi;  // the camera at angle `angle` looks back at the centre
    const double radius = plane * 0.3;
    const double x = extent.x * 0.5 + std::sin(angle) * radius * 0.4;
    const double z = extent.z * 0.5 + std::cos(angle) * radius * 0.4;
    return looking_at(x, z, altitude, yaw, -0.45 - 0.3 * (1 - height));
}

CameraPose dive(double t, PlaneExtent extent, double /*aspect*/) {
    const double plane = extent.larger();
    const double s = smoothstep(t / dive_moving_seconds);
    const double altitude = log_lerp(plane * 1.5, std::min(48.0, plane * 0.05), s);
    const double yaw = 0.7 * s;
    const double pitch = -1.55 + (1.55 - 1.2) * s;  // straight down, then tilting up a little
    return looking_at(extent.x * 0.70, extent.z * 0.42, altitude, yaw, pitch);
}

CameraPose benchmark(double t, PlaneExtent extent, double /*aspect*/) {
    const double plane = extent.larger();
    // A wide circle around the centre, flown forwards, once per pass: new ground every frame
    // (143,000 texels from the centre on a 2^20 texture), and a loop that joins its start.
    const double radius = benchmark_speed(plane) * benchmark_seconds / (2 * pi);
    const double angle = 2 * pi * t / benchmark_seconds;
    const double x = extent.x * 0.5 + radius * std::sin(angle);
    const double z = extent.z * 0.5 + radius * std::cos(angle);
    const double yaw = angle + pi / 2;  // the tangent
    // A slow swell of altitude and pitch: the levels of detail in view change too.
    const double swell = std::sin(2 * pi * t / benchmark_seconds);
    const double altitude = benchmark_altitude(plane) * (1 + 0.5 * swell);
    return {x, altitude, z, yaw, -0.45 - 0.1 * swell};
}

// Places far apart, each seen differently: low and oblique (every level from 0 up), close and
// steep (mostly level 0), higher (coarser levels), low towards the horizon (far and many levels).
struct CutPlace {
    double x, z;      // fractions of the plane's extents
    double altitude;  // times cut_altitude
    double yaw, pitch;
};
constexpr CutPlace cut_places[] = {{0.22, 0.27, 1.0, 0.4, -0.5},
                                   {0.76, 0.24, 0.5, 2.2, -1.2},
                                   {0.3, 0.78, 4.0, 4.0, -0.7},
                                   {0.8, 0.72, 1.0, 5.5, -0.4}};
constexpr int cut_place_count = 4;
constexpr double cuts_seconds = cut_place_count * cut_hold_seconds;

// As low as the benchmark flies at most: level 0 in view at the bottom of the image.
double cut_altitude(double plane) { return std::min(300.0, plane * 0.03); }

CameraPose cuts(double t, PlaneExtent extent, double /*aspect*/) {
    // The end of a pass is the next pass's start: the cut back to the first place.
    const int index = int(t / cut_hold_seconds) % cut_place_count;
    const CutPlace& place = cut_places[index];
    return looking_at(extent.x * place.x, extent.z * place.z,
                      cut_altitude(extent.larger()) * place.altitude, place.yaw, place.pitch);
}

constexpr double tour_whole_seconds = 2;  // the whole image, first
constexpr double tour_in_seconds = 1.5;
constexpr double tour_hold_seconds = 1;
constexpr double tour_out_seconds = 1.5;
constexpr double tour_stop_seconds = tour_in_seconds + tour_hold_seconds + tour_out_seconds;
constexpr double tour_detail_span = 48;  // texels across the shorter side: each many pixels
// Places of detail, as fractions of the texture's width and height.
constexpr double tour_places[][2] = {{0.3, 0.35}, {0.72, 0.6}, {0.45, 0.82}};
constexpr int tour_place_count = 3;
constexpr double tour_seconds = tour_whole_seconds + tour_place_count * tour_stop_seconds;

// From the whole image to a place and back: s = 0 whole, s = 1 the detail.
CameraPose tour_towards(PlaneExtent plane, double aspect, const double (&place)[2], double s) {
    const CameraPose whole = whole_image(plane, aspect);
    CameraPose pose = whole;
    const double detail = std::min(tour_detail_span, whole.altitude);
    pose.altitude = log_lerp(whole.altitude, detail, s);
    // The centre follows the span (not s), so that the place grows steadily into the middle.
    const double range = whole.altitude - detail;
    const double towards = range > 0 ? (whole.altitude - pose.altitude) / range : s;
    pose.x = whole.x + (plane.x * place[0] - whole.x) * towards;
    pose.z = whole.z + (plane.z * place[1] - whole.z) * towards;
    return pose;
}

CameraPose image_tour(double t, PlaneExtent plane, double aspect) {
    if (t < tour_whole_seconds) return whole_image(plane, aspect);
    t -= tour_whole_seconds;
    const int stop = std::min(int(t / tour_stop_seconds), tour_place_count - 1);
    t -= stop * tour_stop_seconds;
    double s = 1;  // holding
    if (t < tour_in_seconds) s = smoothstep(t / tour_in_seconds);
    if (t > tour_in_seconds + tour_hold_seconds) {
        s = 1 - smoothstep((t - tour_in_seconds - tour_hold_seconds) / tour_out_seconds);
    }
    return tour_towards(plane, aspect, tour_places[stop], s);
}

}  // namespace

double benchmark_speed(double plane) { return std::min(90000.0, plane * 0.09); }

double benchmark_altitude(double plane) { return std::min(400.0, plane * 0.05); }

CameraPose CameraPath::at(double t, PlaneExtent plane, double aspect) const {
    t = std::max(t, 0.0);
    if (t > seconds) t = holds_end ? seconds : std::fmod(t, seconds);
    return pose(t, plane, aspect);
}

CameraPose CameraPath::at(double t, const SceneBox& box) const {
    t = std::max(t, 0.0);
    if (t > seconds) t = holds_end ? seconds : std::fmod(t, seconds);
    return scene_pose(t, box);
}

bool CameraPath::cut_between(double t0, double t1) const {
    for (const double cut : cuts) {
        if (holds_end || seconds <= 0) {
            if (cut > 0 && t0 < cut && cut <= t1) return true;
            continue;
        }
        // The first time cut + k * seconds after t0 (k >= 1 for the cut at a pass's start).
        const double k = std::max(std::floor((t0 - cut) / seconds) + 1, cut > 0 ? 0.0 : 1.0);
        if (cut + k * seconds <= t1) return true;
    }
    return false;
}

const std::vector<CameraPath>& camera_paths() {
    static const std::vector<CameraPath> paths = {
        {"overview", "around the centre, climbing and descending: every level of detail",
         overview_seconds, false, &overview},
        {"dive", "from above the whole texture down to texel level, then still", dive_seconds, true,
         &dive},
        {"benchmark", "a fast low flight that streams new pages every frame", benchmark_seconds,
         false, &benchmark},
        {"cuts",
         "holds of 3 s at four places far apart, cutting from one to the next",
         cuts_seconds,
         false,
         &cuts,
         {0.0, cut_hold_seconds, 2 * cut_hold_seconds, 3 * cut_hold_seconds}},
    };
    return paths;
}

const std::vector<CameraPath>& camera_paths(View view) {
    static const std::vector<CameraPath> image = {
        {"image-tour", "the whole image, then into its detail at a few places and back out",
         tour_seconds, false, &image_tour},
    };
    static const std::vector<CameraPath> scene = {
        {.name = "orbit",
         .description = "around the scene at the distance that frames it, rising and sinking",
         .seconds = orbit_seconds,
         .scene_pose = &orbit},
        {.name = "approach",
         .description = "from the framing distance in to a third of it, a hold, and back out",
         .seconds = approach_seconds,
         .scene_pose = &approach},
        {.name = "flythrough",
         .description = "low over the scene from one end to the other, weaving: parts pass close "
                        "by one after another",
         .seconds = flythrough_seconds,
         .holds_end = true,
         .scene_pose = &flythrough},
    };
    if (view == View::image) return image;
    return view == View::scene ? scene : camera_paths();
}

Camera scene_camera(const CameraPose& pose, const SceneBox& box) {
    const auto c = box.centre();
    const double distance = std::hypot(pose.x - c[0], pose.altitude - c[1], pose.z - c[2]);
    const double radius = box.radius();
    Camera camera{.pose = pose};
    // Everything of the scene lies within `radius` of its centre. With the eye inside that sphere
    // (the approach) the near plane is a small part of the far one, and depth crowds towards 1:
    // the scene's far side must stay below 1 by more than the float rounding of a view-projection
    // that carries the eye's place, which grows with its distance from the origin over the
    // scene's size. A far plane a radius beyond the sphere and a near plane at least 1e-3 of it
    // leave 5e-4: whole for scenes up to a few thousand times their size from the origin.
    camera.far_plane = distance + radius * 2;
    camera.near_plane = std::max(distance - radius * 1.01, camera.far_plane * 1e-3);
    return camera;
}

const CameraPath* find_camera_path(std::string_view name) {
    return find_camera_path(View::plane, name);
}

const CameraPath* find_camera_path(View view, std::string_view name) {
    for (const CameraPath& path : camera_paths(view)) {
        if (path.name == name) return &path;
    }
    return nullptr;
}

CameraPose starting_pose(PlaneExtent plane) {
    return looking_at(plane.x * 0.5, plane.z * 0.5, plane.larger() * 0.05, 0.3, -0.6);
}

}  // namespace vtpage::viewer
