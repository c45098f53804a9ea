// Progress of long work on stderr, for the command-line programs:
//
//   on a terminal   one line redrawn in place, at most ten times a second:
//                   "producer [#########.....................]  30% 1200 tiles, 410 MB/s"
//   elsewhere       (a log, CI) a plain line when the work reaches 0, 25, 50 and 75%, and at
//                   most one more every few seconds in between: "producer  30% 1200 tiles ..."
//
// Safe to call from several threads (a monitor thread updates, the main thread finishes).
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace vtpage::app {

struct ProgressSettings {
    std::string label;    // printed before the bar; may be empty
    bool enabled = true;  // false: prints nothing at all (--quiet)
    std::FILE* out = stderr;
    std::optional<bool> terminal;  // unset: whether `out` is a terminal
    double redraw_seconds = 0.1;   // on a terminal: the shortest time between two frames
    double line_seconds = 5;       // elsewhere: the shortest time between two plain lines
                                   // (the quarters of the work print regardless)
    int width = 30;                // characters of the bar
};

class ProgressBar {
public:
    explicit ProgressBar(ProgressSettings settings = {});
    // Ends the line, as end() does.
    ~ProgressBar();
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    // The work is `fraction` (clamped to [0, 1]) done; `status` says what it is doing.
    void update(double fraction, std::string_view status = {});
    // The work is done: the bar at 100% with `status` and a line end on a terminal,
    // "<label> done: <status>" elsewhere. Later calls print nothing.
    void finish(std::string_view status = {});
    // The work stopped short (an error, an interruption): the last state stays on screen with a
    // line end, or is printed as a plain line if the log has not seen it yet.
    void end();
    // Takes the bar off a terminal (for output that should start on a clean line: tables);
    // prints nothing elsewhere. The bar can be drawn again by update().
    void clear();

    bool terminal() const { return terminal_; }

private:
    using Clock = std::chrono::steady_clock;
    void draw(double fraction, std::string_view status);  // a frame or a plain line
    void end_line();

    ProgressSettings settings_;
    bool terminal_;
    int columns_ = 0;  // the terminal's width, 0 when unknown
    std::mutex mutex_;
    bool on_screen_ = false;  // a frame is drawn and its line not ended
    bool finished_ = false;
    bool shown_latest_ = true;  // the latest update was drawn or printed
    int next_quarter_ = 0;      // elsewhere: the next quarter that prints a line
    double fraction_ = 0;
    std::string status_;
    std::optional<Clock::time_point> last_output_;
};

}  // namespace vtpage::app
