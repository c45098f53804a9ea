// The viewer's camera over the ground plane. World units are texels of mip 0: the plane covers
// [0, plane_size] in x and z at y = 0 (uv = xz / plane_size), and y is the altitude.
#pragma once

#include <array>

namespace vtpage::viewer {

struct CameraPose {
    double x = 0;
    double altitude = 1;  // y, above the plane
    double z = 0;
    double yaw = 0;       // radians; 0 looks along +z, positive turns towards +x
    double pitch = -0.5;  // radians; negative looks down
};

struct Camera {
    CameraPose pose;
    double fov_y = 1.0471975511965976;  // 60 degrees

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
CameraPose clamp_pose(CameraPose pose, double plane_size);

// The point of the plane the camera looks at; nothing when it looks at or above the horizon.
bool looked_at_point(const CameraPose& pose, double& x, double& z);

}  // namespace vtpage::viewer
