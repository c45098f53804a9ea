// Scripted, repeatable flights over the plane, by name: the same pose for the same time on every
// run, scaled to the texture's larger side and centred on its plane (PlaneExtent); a square
// plane of side s gives the same poses as the plane_size s of old.
//   overview   a loop around the centre, climbing and descending: every level of detail
//   dive       from above the whole texture straight down to texel level, then holds still
//   benchmark  a fast low flight that keeps streaming new pages every frame
// and, for the image view (an orthographic camera, camera.hpp):
//   image-tour the whole image, then zooms into its detail at a few places and back out
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
    // Within one pass, for an image of this aspect (width / height; the image view frames by
    // it, the flights need not).
    CameraPose (*pose)(double seconds, PlaneExtent plane, double aspect) = nullptr;

    // The pose at time t (seconds from the start), looping or holding after one pass.
    CameraPose at(double t, PlaneExtent plane, double aspect = 16.0 / 9.0) const;
};

// What the viewer shows: the plane flown over in perspective, or the texture as an image.
enum class View { plane, image };
inline Projection projection_of(View view) {
    return view == View::image ? Projection::orthographic : Projection::perspective;
}

// The flights over the plane.
const std::vector<CameraPath>& camera_paths();
// The paths of a view (the flights, or the image's tours).
const std::vector<CameraPath>& camera_paths(View view);
// nullptr for an unknown name (of the plane's paths, or of the view's).
const CameraPath* find_camera_path(std::string_view name);
const CameraPath* find_camera_path(View view, std::string_view name);

// Where a manual flight starts: over the centre, high enough to see a good part of the plane.
CameraPose starting_pose(PlaneExtent plane);

// The benchmark flight's speed and altitude over a plane of this size (texels per second of
// path time, texels), for the documentation and the tests.
double benchmark_speed(double plane_size);
double benchmark_altitude(double plane_size);

}  // namespace vtpage::viewer
