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
// and, for a mesh scene (--scene), framing its bounds (SceneBox):
//   orbit      around the scene at the distance that frames it, rising and sinking
//   approach   from the framing distance in to a third of it, a hold, and back out
//   flythrough low over the scene from one end to the other, weaving, then holds
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
    // The scene view's paths have this instead: a pose within one pass around the scene's box.
    CameraPose (*scene_pose)(double seconds, const SceneBox& box) = nullptr;

    // The pose at time t (seconds from the start), looping or holding after one pass.
    CameraPose at(double t, PlaneExtent plane, double aspect = 16.0 / 9.0) const;
    CameraPose at(double t, const SceneBox& box) const;  // a scene path's
    // Whether the view cuts in (t0, t1]: a frame at t1 after one at t0 shows a new pose.
    bool cut_between(double t0, double t1) const;
};

// What the viewer shows: the plane flown over in perspective, the texture as an image, or a
// mesh scene (--scene) in perspective.
enum class View { plane, image, scene };
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

// A perspective camera at `pose` whose depth range holds the whole scene (depth tested).
Camera scene_camera(const CameraPose& pose, const SceneBox& box);

// Where a manual flight starts: over the centre, high enough to see a good part of the plane.
CameraPose starting_pose(PlaneExtent plane);

// The benchmark flight's speed and altitude over a plane of this size (texels per second of
// path time, texels), for the documentation and the tests.
double benchmark_speed(double plane_size);
double benchmark_altitude(double plane_size);

// The cuts path: how long each pose is held.
inline constexpr double cut_hold_seconds = 3.0;

}  // namespace vtpage::viewer
