// The viewer without a window (no GLFW, no display, no window system): a camera path flown at a
// fixed time step per frame, so that a run is repeatable whatever the frame rate; a progress line
// every second; then the summary, the screenshot and the stats.
#pragma once

#include "viewer_options.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage::viewer {

// The exit status (see finish_run).
int run_headless(const ViewerOptions& options, const Log& log);

// Frames of one pass of the options' camera path at their time step (the default of --frames).
std::uint64_t default_headless_frames(const ViewerOptions& options);

}  // namespace vtpage::viewer
