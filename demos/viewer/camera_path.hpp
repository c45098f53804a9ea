// Scripted, repeatable flights over the plane, by name: the same pose for the same time on every
// run, scaled to the texture's larger side and centred on its plane (PlaneExtent); a square
// plane of side s gives the same poses as the plane_size s of old.
//   overview   a loop around the centre, climbing and descending: every level of detail
//   dive       from above the whole texture straight down to texel level, then holds still
//   benchmark  a fast low flight that keeps streaming new pages every frame
//   cuts       holds of a few seconds at places far apart, cutting from one to the next: how
//              long the view takes to reach full detail after a cut (frame_stats.hpp)
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
    // Times within a pass at which the view jumps to a new pose (a camera cut); 0 stands for the
    // start of every pass after the first, where a loop does not join its end.
    std::vector<double> cuts;

    // The pose at time t (seconds from the start), looping or holding after one pass.
    CameraPose at(double t, PlaneExtent plane, double aspect = 16.0 / 9.0) const;
    // Whether the view cuts in (t0, t1]: a frame at t1 after one at t0 shows a new pose.
    bool cut_between(double t0, double t1) const;
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

// The cuts path: how long each pose is held.
inline constexpr double cut_hold_seconds = 3.0;

}  // namespace vtpage::viewer
