#include "camera.hpp"

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

namespace vtpage::viewer {

std::array<float, 16> Camera::view_projection(double aspect) const {
    const glm::dvec3 eye(pose.x, pose.altitude, pose.z);
    const glm::dvec3 forward(std::sin(pose.yaw) * std::cos(pose.pitch), std::sin(pose.pitch),
                             std::cos(pose.yaw) * std::cos(pose.pitch));
    const glm::dmat4 view = glm::lookAtRH(eye, eye + forward, glm::dvec3(0, 1, 0));
    // The nearest point of the plane is `altitude` away: a near plane at half of it clips
    // nothing. There is no depth buffer, so a far plane far beyond the horizon costs nothing.
    const double near_plane = std::max(pose.altitude * 0.5, 0.01);
    const double far_plane = std::max(pose.altitude, 1.0) * 1e6;
    glm::dmat4 projection = glm::perspectiveRH_ZO(fov_y, aspect, near_plane, far_plane);
    projection[1][1] *= -1;  // Vulkan's clip space has y pointing down
    const glm::dmat4 matrix = projection * view;
    std::array<float, 16> result{};
    for (int column = 0; column < 4; ++column) {
        for (int row = 0; row < 4; ++row) {
            result[column * 4 + row] = static_cast<float>(matrix[column][row]);
        }
    }
    return result;
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

}  // namespace vtpage::viewer
