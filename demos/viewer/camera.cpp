#include "camera.hpp"

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

namespace vtpage::viewer {

namespace {

std::array<float, 16> to_floats(const glm::dmat4& matrix) {
    std::array<float, 16> result{};
    for (int column = 0; column < 4; ++column) {
        for (int row = 0; row < 4; ++row) {
            result[column * 4 + row] = static_cast<float>(matrix[column][row]);
        }
    }
    return result;
}

// Straight down at (x, z): x to clip x, z to clip y (down in Vulkan), depth a constant 0.5.
std::array<float, 16> orthographic(const CameraPose& pose, double aspect) {
    double half_x = 0, half_z = 0;
    image_half_extents(pose.altitude, aspect, half_x, half_z);
    glm::dmat4 m(0.0);
    m[0][0] = 1 / half_x;
    m[2][1] = 1 / half_z;
    m[3][0] = -pose.x / half_x;
    m[3][1] = -pose.z / half_z;
    m[3][2] = 0.5;
    m[3][3] = 1;
    return to_floats(m);
}

}  // namespace

std::array<float, 16> Camera::view_projection(double aspect) const {
    if (projection == Projection::orthographic) return orthographic(pose, aspect);
    const glm::dvec3 eye(pose.x, pose.altitude, pose.z);
    const glm::dvec3 forward(std::sin(pose.yaw) * std::cos(pose.pitch), std::sin(pose.pitch),
                             std::cos(pose.yaw) * std::cos(pose.pitch));
    const glm::dmat4 view = glm::lookAtRH(eye, eye + forward, glm::dvec3(0, 1, 0));
    // The nearest point of the plane is `altitude` away: a near plane at half of it clips
    // nothing. There is no depth buffer, so a far plane far beyond the horizon costs nothing.
    const bool given = near_plane > 0 && far_plane > near_plane;
    const double near_used = given ? near_plane : std::max(pose.altitude * 0.5, 0.01);
    const double far_used = given ? far_plane : std::max(pose.altitude, 1.0) * 1e6;
    glm::dmat4 perspective = glm::perspectiveRH_ZO(fov_y, aspect, near_used, far_used);
    perspective[1][1] *= -1;  // Vulkan's clip space has y pointing down
    return to_floats(perspective * view);
}

std::array<double, 3> SceneBox::centre() const {
    return {(min[0] + max[0]) * 0.5, (min[1] + max[1]) * 0.5, (min[2] + max[2]) * 0.5};
}

double SceneBox::radius() const {
    const glm::dvec3 diagonal(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
    return std::max(glm::length(diagonal) * 0.5, 1e-6);
}

double max_altitude(double plane_size) { return std::max(plane_size * 2.0, 64.0); }

CameraPose clamp_pose(CameraPose pose, PlaneExtent plane) {
    const double margin = plane.larger() * 0.5;
    pose.x = std::clamp(pose.x, -margin, plane.x + margin);
    pose.z = std::clamp(pose.z, -margin, plane.z + margin);
    pose.altitude = std::clamp(pose.altitude, min_altitude, max_altitude(plane.larger()));
    pose.pitch = std::clamp(pose.pitch, max_pitch_down, max_pitch_up);
    pose.yaw = std::remainder(pose.yaw, 2 * glm::pi<double>());
    return pose;
}

bool looked_at_point(const CameraPose& pose, double& x, double& z) {
    if (pose.pitch >= 0) return false;
    const double distance = pose.altitude / std::tan(-pose.pitch);
    x = pose.x + std::sin(pose.yaw) * distance;
    z = pose.z + std::cos(pose.yaw) * distance;
    return true;
}

double max_image_span(PlaneExtent plane) { return std::max(plane.larger() * 2.0, 64.0); }

void image_half_extents(double span, double aspect, double& half_x, double& half_z) {
    // The span is across the shorter side, so that one span frames a square at any aspect.
    half_x = aspect >= 1 ? span * aspect / 2 : span / 2;
    half_z = aspect >= 1 ? span / 2 : span / aspect / 2;
}

CameraPose whole_image(PlaneExtent plane, double aspect) {
    double half_x = 0, half_z = 0;
    image_half_extents(1, aspect, half_x, half_z);  // per texel of span
    const double span = 1.05 * std::max(plane.x / (2 * half_x), plane.z / (2 * half_z));
    return {plane.x * 0.5, span, plane.z * 0.5, 0, max_pitch_down};
}

CameraPose clamp_image_pose(CameraPose pose, PlaneExtent plane) {
    pose.x = std::clamp(pose.x, 0.0, plane.x);
    pose.z = std::clamp(pose.z, 0.0, plane.z);
    pose.altitude = std::clamp(pose.altitude, min_image_span, max_image_span(plane));
    return pose;
}

CameraPose zoom_image_about(CameraPose pose, double factor, double x, double z) {
    pose.altitude *= factor;
    pose.x = x + (pose.x - x) * factor;
    pose.z = z + (pose.z - z) * factor;
    return pose;
}

}  // namespace vtpage::viewer
