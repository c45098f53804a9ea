// Scripted, repeatable flights over the plane, by name: the same pose for the same time on every
// run, scaled to the texture's larger side and centred on its plane (PlaneExtent); a square
// plane of side s gives the same poses as the plane_size s of old.
//   overview   a loop around the centre, climbing and descending: every level of detail
//   dive       from above the whole texture straight down to texel level, then holds still
//   benchmark  a fast low flight that keeps streaming new pages every frame
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "camera.hpp"

namespace vtpage::viewer {

struct CameraPath {
    std::string name;
    std::string description;
    double seconds = 0;      // one pass
    bool holds_end = false;  // after one pass: stays at the last pose (else: loops)
    CameraPose (*pose)(double seconds, PlaneExtent plane) = nullptr;  // within one pass

    // The pose at time t (seconds from the start), looping or holding after one pass.
    CameraPose at(double t, PlaneExtent plane) const;
};

const std::vector<CameraPath>& camera_paths();
// nullptr for an unknown name.
const CameraPath* find_camera_path(std::string_view name);

// Where a manual flight starts: over the centre, high enough to see a good part of the plane.
CameraPose starting_pose(PlaneExtent plane);

// The benchmark flight's speed and altitude over a plane of this size (texels per second of
// path time, texels), for the documentation and the tests.
double benchmark_speed(double plane_size);
double benchmark_altitude(double plane_size);

}  // namespace vtpage::viewer
