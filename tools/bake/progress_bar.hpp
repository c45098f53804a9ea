// A one-line progress bar on stderr: "[#########.........]  45% writing pages".
#pragma once

#include <string>
#include <string_view>

namespace vtpage::tools {

class ProgressBar {
public:
    explicit ProgressBar(bool enabled = true) : enabled_(enabled) {}
    ~ProgressBar() { finish(); }
    // Redraws when the percentage or the stage changes.
    void update(double fraction, std::string_view stage);
    // Ends the line (once).
    void finish();

private:
    bool enabled_;
    bool drawn_ = false;
    int last_percent_ = -1;
    std::string last_stage_;
};

}  // namespace vtpage::tools
