// The viewer in a GLFW window: mouse and keyboard fly the camera (or a camera path plays), the
// HUD shows what streams, frames are presented to the window's swapchain.
#pragma once

#include <memory>

#include "session_scene.hpp"
#include "viewer_options.hpp"
#include "vtpage/base/log.hpp"

namespace vtpage::viewer {

// The exit status (see finish_run); 1 with a message when no window can be opened. `scene`: the
// mesh scene of --scene, loaded and baked.
int run_window(const ViewerOptions& options, const Log& log,
               std::shared_ptr<const SessionScene> scene = nullptr);

}  // namespace vtpage::viewer
