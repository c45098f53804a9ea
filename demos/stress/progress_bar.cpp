#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace vtpage::stress {

ProgressBar::ProgressBar(bool enabled, std::string label)
    : enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) == 1),
      label_(std::move(label)),
      last_line_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
    if (enabled_ && terminal_ && !finished_) std::fputc('\n', stderr);
}

void ProgressBar::update(double fraction, const std::string& status) {
    if (!enabled_) return;
    fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    if (terminal_) {
        constexpr int width = 30;
        const int filled = static_cast<int>(fraction * width);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.resize(width, '.');
        std::fprintf(stderr, "\r%s [%s] %3d%% %s\x1b[K", label_.c_str(), bar.c_str(),
                     static_cast<int>(fraction * 100), status.c_str());
        std::fflush(stderr);
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_line_ < std::chrono::seconds(5)) return;
    last_line_ = now;
    std::fprintf(stderr, "%s %3d%% %s\n", label_.c_str(), static_cast<int>(fraction * 100),
                 status.c_str());
}

void ProgressBar::finish(const std::string& status) {
    if (!enabled_ || finished_) return;
    finished_ = true;
    if (terminal_) {
        update(1.0, status);
        std::fputc('\n', stderr);
    } else {
        std::fprintf(stderr, "%s done: %s\n", label_.c_str(), status.c_str());
    }
}

}  // namespace vtpage::stress
