// The viewer without a window (no GLFW, no display, no window system): a camera path flown at a
// fixed time step per frame, so that a run is repeatable whatever the frame rate; a progress line
// every second; then the summary, the screenshot and the stats.
#pragma once

#include <cstdint>
#include <memory>

#include "camera_path.hpp"
#include "frame_stats.hpp"
#include "session_scene.hpp"
#include "streaming_session.hpp"
#include "viewer_options.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage::viewer {

class Hud;

// The exit status (see finish_run). `scene`: the mesh scene of --scene, loaded and baked.
int run_headless(const ViewerOptions& options, const Log& log,
                 std::shared_ptr<const SessionScene> scene = nullptr);

// Frames of one pass of the options' camera path at their time step (the default of --frames).
std::uint64_t default_headless_frames(const ViewerOptions& options);

// Flies `frames` frames of `path` (options: size, time step, mode, screenshot of the last
// frame, progress) through the session, recording into `stats`; the HUD is drawn when given.
// Returns the seconds the frames took (the frames in flight at the end are waited for after).
double fly_path(StreamingSession& session, const CameraPath& path, std::uint64_t frames,
                const ViewerOptions& options, FrameStats& stats, Hud* hud);

}  // namespace vtpage::viewer
