// Latency percentiles without storing samples: a log-spaced histogram (about 3% wide buckets
// from 10 ns to about 100 s) with atomic counters, safe to record from many threads at once.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace vtpage {

struct LatencySummary {
    std::uint64_t count = 0;
    double mean_us = 0;
    double p50_us = 0;
    double p99_us = 0;
    double max_us = 0;
};

class LatencyHistogram {
public:
    void record(std::chrono::nanoseconds duration) noexcept;
    LatencySummary summary() const noexcept;
    void reset() noexcept;

    // Records the time from construction to destruction into a histogram.
    class Timer {
    public:
        explicit Timer(LatencyHistogram& histogram)
            : histogram_(histogram), start_(std::chrono::steady_clock::now()) {}
        ~Timer() { histogram_.record(std::chrono::steady_clock::now() - start_); }
        Timer(const Timer&) = delete;
        Timer& operator=(const Timer&) = delete;

    private:
        LatencyHistogram& histogram_;
        std::chrono::steady_clock::time_point start_;
    };

private:
    static constexpr std::size_t bucket_count = 800;
    static std::size_t bucket_of(std::uint64_t nanoseconds) noexcept;
    static double bucket_upper_ns(std::size_t bucket) noexcept;

    std::array<std::atomic<std::uint64_t>, bucket_count> buckets_{};
    std::atomic<std::uint64_t> count_{0};
    std::atomic<std::uint64_t> total_ns_{0};
    std::atomic<std::uint64_t> max_ns_{0};
};

}  // namespace vtpage
