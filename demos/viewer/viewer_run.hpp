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

// SIGINT ends the flight at the next frame instead of the program: that frame is captured for
// --screenshot, the statistics cover the frames flown, and the run exits 1 (it did not finish).
// Installed by the loops before they fly; interrupt_requested() says whether SIGINT came.
void finish_early_on_interrupt();
bool interrupt_requested() noexcept;

// Writes the screenshot (the last captured frame) and the stats JSON where asked, prints the
// summary to `out`, and returns the exit status: 1 when the validation layer said anything, the
// identity check found violations, a requested settle did not happen or SIGINT ended the flight
// early, else 0.
int finish_run(const ViewerOptions& options, const StreamingSession& session,
               const FrameStats& stats, double seconds, bool settled, std::FILE* out);

}  // namespace vtpage::viewer
