#include "run_monitor.hpp"

#include <algorithm>
#include <cstdio>

namespace vtpage::stress {

RunMonitor::RunMonitor(PageTable& table, RunStats& stats, OpQuota& quota,
                       app::ProgressBar& progress, MonitorSettings settings)
    : table_(table), stats_(stats), quota_(quota), progress_(progress), settings_(settings) {
    thread_ = std::thread([this] { run(); });
}

RunMonitor::~RunMonitor() { stop(); }

void RunMonitor::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

std::string RunMonitor::status() const {
    const double seconds = std::max(quota_.elapsed_seconds(), 1e-9);
    char text[160];
    std::snprintf(text, sizeof(text), "%llu ops, %.0f ops/s, %llu integrity errors",
                  static_cast<unsigned long long>(stats_.ops.load()),
                  double(stats_.ops.load()) / seconds,
                  static_cast<unsigned long long>(stats_.integrity_errors.load()));
    return text;
}

void RunMonitor::run() {
    using Clock = std::chrono::steady_clock;
    using Ms = std::chrono::duration<double, std::milli>;
    auto next_check = Clock::now();
    auto next_frame = Clock::now();
    auto next_draw = Clock::now();
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        const auto now = Clock::now();
        lock.unlock();
        if (now >= next_draw) {
            progress_.update(quota_.fraction(), status());
            next_draw = now + std::chrono::milliseconds(100);
        }
        if (settings_.check_ms > 0 && now >= next_check) {
            try {
                table_.check_invariants();
                ++stats_.invariant_checks;
            } catch (const Error& error) {
                stats_.integrity_error(error.what());
            }
            next_check = now + std::chrono::duration_cast<Clock::duration>(Ms(settings_.check_ms));
        }
        if (settings_.frame_ms > 0 && now >= next_frame) {
            const FrameId frame = table_.begin_frame();
            if (frame > settings_.frames_in_flight) {
                table_.complete_frame(frame - settings_.frames_in_flight);
            }
            next_frame = now + std::chrono::duration_cast<Clock::duration>(Ms(settings_.frame_ms));
        }
        auto wake_at = next_draw;
        if (settings_.check_ms > 0) wake_at = std::min(wake_at, next_check);
        if (settings_.frame_ms > 0) wake_at = std::min(wake_at, next_frame);
        lock.lock();
        wake_.wait_until(lock, wake_at, [this] { return stopping_; });
    }
}

}  // namespace vtpage::stress
