// The viewer in a GLFW window: mouse and keyboard fly the camera (or a camera path plays), the
// HUD shows what streams, frames are presented to the window's swapchain.
#pragma once

#include "viewer_options.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage::viewer {

// The exit status (see finish_run); 1 with a message when no window can be opened.
int run_window(const ViewerOptions& options, const Log& log);

}  // namespace vtpage::viewer
