// A one-line progress display: a bar, a percentage and a status text, redrawn in place on a
// terminal (at most ten times a second) and printed as a plain line once a second otherwise
// (logs, CI).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace vtpage::demo {

class ProgressLine {
public:
    explicit ProgressLine(std::string label, bool enabled = true)
        : label_(std::move(label)), enabled_(enabled), terminal_(isatty(STDOUT_FILENO) != 0) {}

    // fraction in [0, 1].
    void update(double fraction, const std::string& status, bool force = false) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::seconds(1);
        if (!force && now - last_ < every) return;
        last_ = now;
        fraction = std::clamp(fraction, 0.0, 1.0);
        constexpr int width = 24;
        const int filled = static_cast<int>(fraction * width + 0.5);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.append(static_cast<std::size_t>(width - filled), '.');
        std::printf("%s%s [%s] %3d%% %s%s", terminal_ ? "\r" : "", label_.c_str(), bar.c_str(),
                    static_cast<int>(fraction * 100 + 0.5), status.c_str(),
                    terminal_ ? "\x1b[K" : "\n");
        std::fflush(stdout);
        drawn_ = true;
    }
    // Ends the line so that later output starts on a fresh one.
    void finish(const std::string& status) {
        update(1.0, status, true);
        if (enabled_ && terminal_ && drawn_) std::printf("\n");
        std::fflush(stdout);
    }

private:
    std::string label_;
    bool enabled_;
    bool terminal_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace vtpage::demo
