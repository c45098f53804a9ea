// When the workers stop: after a number of page operations, at a deadline, or when told.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace vtpage::stress {

class OpQuota {
public:
    using Clock = std::chrono::steady_clock;
    // target 0: no limit by count; seconds 0: no deadline.
    OpQuota(std::uint64_t target, double seconds)
        : target_(target),
          start_(Clock::now()),
          deadline_(seconds > 0 ? start_ + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(seconds))
                                : Clock::time_point::max()) {}

    bool running() const {
        return !stopped_.load(std::memory_order_relaxed) &&
               (target_ == 0 || done_.load(std::memory_order_relaxed) < target_) &&
               Clock::now() < deadline_;
    }
    void add(std::uint64_t ops) { done_.fetch_add(ops, std::memory_order_relaxed); }
    void stop() { stopped_ = true; }
    std::uint64_t done() const { return done_.load(std::memory_order_relaxed); }
    double elapsed_seconds() const {
        return std::chrono::duration<double>(Clock::now() - start_).count();
    }
    // How far along, 0 to 1, by count or by time, whichever is further.
    double fraction() const {
        double by_count = target_ ? double(done()) / double(target_) : 0.0;
        double by_time = 0.0;
        if (deadline_ != Clock::time_point::max()) {
            by_time = elapsed_seconds() / std::chrono::duration<double>(deadline_ - start_).count();
        }
        double f = by_count > by_time ? by_count : by_time;
        return f > 1.0 ? 1.0 : f;
    }

private:
    std::uint64_t target_;
    Clock::time_point start_;
    Clock::time_point deadline_;
    std::atomic<std::uint64_t> done_{0};
    std::atomic<bool> stopped_{false};
};

}  // namespace vtpage::stress
