#include "vtpage/app/progress_bar.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace vtpage::app {

namespace {

int terminal_columns(std::FILE* out) {
    winsize size{};
    if (ioctl(fileno(out), TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}

std::chrono::steady_clock::duration seconds(double value) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(value));
}

}  // namespace

ProgressBar::ProgressBar(ProgressSettings settings)
    : settings_(std::move(settings)),
      terminal_(settings_.terminal.value_or(isatty(fileno(settings_.out)) == 1)) {
    if (terminal_ && settings_.enabled) columns_ = terminal_columns(settings_.out);
}

ProgressBar::~ProgressBar() { end(); }

void ProgressBar::update(double fraction, std::string_view status) {
    std::lock_guard lock(mutex_);
    if (!settings_.enabled || finished_) return;
    fraction_ = fraction >= 0 ? std::min(fraction, 1.0) : 0.0;  // NaN too: 0
    status_ = std::string(status);
    const Clock::time_point now = Clock::now();
    bool due = false;
    if (terminal_) {
        due = !last_output_ || now - *last_output_ >= seconds(settings_.redraw_seconds);
    } else {
        // A line at each quarter reached (so a short run logs a handful), and between them at
        // most one every line_seconds (so a long one says it is alive).
        const bool quarter = next_quarter_ < 4 && fraction_ * 4 >= next_quarter_;
        if (quarter) next_quarter_ = std::min(4, int(std::floor(fraction_ * 4)) + 1);
        due = quarter || !last_output_ || now - *last_output_ >= seconds(settings_.line_seconds);
    }
    if (!due) {
        shown_latest_ = false;
        return;
    }
    draw(fraction_, status_);
    last_output_ = now;
}

void ProgressBar::finish(std::string_view status) {
    std::lock_guard lock(mutex_);
    if (!settings_.enabled || finished_) return;
    finished_ = true;
    if (terminal_) {
        draw(1.0, status);
        end_line();
        return;
    }
    std::string line = settings_.label.empty() ? "done" : settings_.label + " done";
    if (!status.empty()) line.append(": ").append(status);
    std::fprintf(settings_.out, "%s\n", line.c_str());
    std::fflush(settings_.out);
}

void ProgressBar::end() {
    std::lock_guard lock(mutex_);
    if (!settings_.enabled || finished_) return;
    finished_ = true;
    if (!shown_latest_) draw(fraction_, status_);
    if (terminal_) end_line();
}

void ProgressBar::clear() {
    std::lock_guard lock(mutex_);
    if (!settings_.enabled) return;
    shown_latest_ = true;  // nothing owed to a log either
    if (!terminal_ || !on_screen_) return;
    std::fputs("\r\x1b[K", settings_.out);
    std::fflush(settings_.out);
    on_screen_ = false;
    last_output_.reset();  // the next update draws at once
}

void ProgressBar::draw(double fraction, std::string_view status) {
    const int percent = int(fraction * 100);
    std::string line;
    if (terminal_) {
        const int filled = int(fraction * settings_.width);
        line = settings_.label.empty() ? "[" : settings_.label + " [";
        line.append(std::size_t(filled), '#').append(std::size_t(settings_.width - filled), '.');
        char tail[16];
        std::snprintf(tail, sizeof(tail), "] %3d%%", percent);
        line.append(tail);
        if (!status.empty()) line.append(" ").append(status);
        // One line even on a narrow terminal: a wrapped line would not be redrawn in place.
        if (columns_ > 1 && line.size() >= std::size_t(columns_)) {
            line.resize(std::size_t(columns_ - 1));
        }
        std::fprintf(settings_.out, "\r%s\x1b[K", line.c_str());
        on_screen_ = true;
    } else {
        char head[16];
        std::snprintf(head, sizeof(head), "%3d%%", percent);
        line = settings_.label.empty() ? head : settings_.label + " " + head;
        if (!status.empty()) line.append(" ").append(status);
        std::fprintf(settings_.out, "%s\n", line.c_str());
    }
    std::fflush(settings_.out);
    shown_latest_ = true;
}

void ProgressBar::end_line() {
    if (!on_screen_) return;
    std::fputc('\n', settings_.out);
    std::fflush(settings_.out);
    on_screen_ = false;
}

}  // namespace vtpage::app
