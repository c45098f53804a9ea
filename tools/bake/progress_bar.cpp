#include "progress_bar.hpp"

#include <algorithm>
#include <cstdio>

namespace vtpage::tools {

void ProgressBar::update(double fraction, std::string_view stage) {
    if (!enabled_) return;
    const int percent = int(std::clamp(fraction, 0.0, 1.0) * 100.0);
    if (percent == last_percent_ && stage == last_stage_) return;
    last_percent_ = percent;
    last_stage_ = std::string(stage);
    constexpr int width = 30;
    const int filled = percent * width / 100;
    std::fprintf(stderr, "\r[%s%s] %3d%% %-24.*s", std::string(std::size_t(filled), '#').c_str(),
                 std::string(std::size_t(width - filled), '.').c_str(), percent,
                 int(stage.size()), stage.data());
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::finish() {
    if (drawn_) std::fprintf(stderr, "\n");
    drawn_ = false;
}

}  // namespace vtpage::tools
