// Progress on stderr: a bar redrawn in place on a terminal, a plain line every few seconds
// otherwise (logs, CI), nothing when disabled.
#pragma once

#include <chrono>
#include <string>

namespace vtpage::stress {

class ProgressBar {
public:
    ProgressBar(bool enabled, std::string label);
    ~ProgressBar();
    void update(double fraction, const std::string& status);
    // Ends the bar's line (on a terminal) and prints the last status.
    void finish(const std::string& status);

private:
    bool enabled_;
    bool terminal_;
    bool finished_ = false;
    std::string label_;
    std::chrono::steady_clock::time_point last_line_;
};

}  // namespace vtpage::stress
