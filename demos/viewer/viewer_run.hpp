// What the window loop and the headless loop share: the session's settings from the options, and
// the end of a run (screenshot, stats JSON, summary, exit status).
#pragma once

#include <cstdio>

#include "frame_stats.hpp"
#include "run_report.hpp"
#include "streaming_session.hpp"
#include "viewer_options.hpp"

namespace vtpage::viewer {

// The frames the renderer keeps in flight (and the HUD's buffers follow).
inline constexpr std::uint32_t frames_in_flight = 2;

SessionSettings session_settings(const ViewerOptions& options, const Log& log);

// Writes the screenshot (the last captured frame) and the stats JSON where asked, prints the
// summary to `out`, and returns the exit status: 1 when the validation layer said anything, the
// identity check found violations or a requested settle did not happen, else 0.
int finish_run(const ViewerOptions& options, const StreamingSession& session,
               const FrameStats& stats, double seconds, bool settled, std::FILE* out);

}  // namespace vtpage::viewer
