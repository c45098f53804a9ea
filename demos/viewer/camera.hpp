// The viewer's camera over the ground plane. World units are texels of mip 0: the plane covers
// [0, extent.x] x [0, extent.z] at y = 0 (uv = (x / extent.x, z / extent.z)), the texture at its
// aspect, and y is the altitude.
#pragma once

#include <algorithm>
#include <array>

namespace vtpage::viewer {

// The ground plane's size along x and z (the texture's width and height in texels).
struct PlaneExtent {
    double x = 1;
    double z = 1;

    constexpr PlaneExtent() = default;
    constexpr PlaneExtent(double x_extent, double z_extent) : x(x_extent), z(z_extent) {}
    // A square plane of this side (what every texture had before textures had any shape).
    constexpr PlaneExtent(double side) : x(side), z(side) {}  // NOLINT(google-explicit-constructor)
    constexpr double larger() const { return std::max(x, z); }
};

struct CameraPose {
    double x = 0;
    double altitude = 1;  // y, above the plane
    double z = 0;
    double yaw = 0;       // radians; 0 looks along +z, positive turns towards +x
    double pitch = -0.5;  // radians; negative looks down
};

// A perspective flight over the plane, or the texture seen as an image: an orthographic view
// straight down, centred on (pose.x, pose.z), pose.altitude texels across the image's shorter
// side (yaw and pitch unused); screen right is +x and screen down +z, so rows read top-first.
enum class Projection { perspective, orthographic };

// A mesh scene's world-space bounds, which the scene view's paths frame.
struct SceneBox {
    std::array<double, 3> min{0, 0, 0};
    std::array<double, 3> max{1, 1, 1};
    std::array<double, 3> centre() const;
    double radius() const;  // half the diagonal (at least a small positive number)
};

struct Camera {
    CameraPose pose;
    double fov_y = 1.0471975511965976;  // 60 degrees
    Projection projection = Projection::perspective;
    // The depth range of a perspective camera; 0: following the altitude over a plane (a mesh
    // scene, depth tested, gives its own: scene_camera in camera_path.hpp).
    double near_plane = 0;
    double far_plane = 0;

    // World to clip, column-major, Vulkan clip space (y down, depth 0..1); near and far follow
    // the altitude so that the whole plane below the horizon is drawn.
    std::array<float, 16> view_projection(double aspect) const;
};

// The lowest and highest a camera goes over a plane of this size, and the steepest it looks.
inline constexpr double min_altitude = 2.0;
double max_altitude(double plane_size);
inline constexpr double max_pitch_down = -1.5620696805349924;  // -89.5 degrees
inline constexpr double max_pitch_up = 0.5;

// Keeps the pose over (or near) the plane and the pitch in range.
CameraPose clamp_pose(CameraPose pose, PlaneExtent plane);

// The point of the plane the camera looks at; nothing when it looks at or above the horizon.
bool looked_at_point(const CameraPose& pose, double& x, double& z);

// The orthographic image view (Projection::orthographic). Its span is pose.altitude.
inline constexpr double min_image_span = 8.0;  // texels across the shorter side
double max_image_span(PlaneExtent plane);
// Half the world extents the view shows in x and z for an image of this aspect (width / height).
void image_half_extents(double span, double aspect, double& half_x, double& half_z);
// The whole texture, centred, with a small border, in an image of this aspect.
CameraPose whole_image(PlaneExtent plane, double aspect);
// Keeps the centre over the texture and the span in range.
CameraPose clamp_image_pose(CameraPose pose, PlaneExtent plane);
// The span times `factor`, keeping the world point (x, z) where it is on the screen.
CameraPose zoom_image_about(CameraPose pose, double factor, double x, double z);

}  // namespace vtpage::viewer
