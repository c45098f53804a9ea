#include "vtpage/core/latency_histogram.hpp"

#include <cmath>

namespace vtpage {

namespace {
constexpr double smallest_ns = 10.0;
constexpr double growth = 1.03;  // each bucket is 3% wider than the one before
const double log_growth = std::log(growth);
}  // namespace

std::size_t LatencyHistogram::bucket_of(std::uint64_t nanoseconds) noexcept {
    if (static_cast<double>(nanoseconds) <= smallest_ns) return 0;
    auto bucket =
        static_cast<std::size_t>(std::log(double(nanoseconds) / smallest_ns) / log_growth) + 1;
    return bucket < bucket_count ? bucket : bucket_count - 1;
}

double LatencyHistogram::bucket_upper_ns(std::size_t bucket) noexcept {
    return smallest_ns * std::pow(growth, double(bucket));
}

void LatencyHistogram::record(std::chrono::nanoseconds duration) noexcept {
    const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, duration.count()));
    buckets_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    total_ns_.fetch_add(ns, std::memory_order_relaxed);
    std::uint64_t seen = max_ns_.load(std::memory_order_relaxed);
    while (ns > seen && !max_ns_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {}
}

LatencySummary LatencyHistogram::summary() const noexcept {
    LatencySummary result;
    result.count = count_.load(std::memory_order_relaxed);
    if (result.count == 0) return result;
    result.mean_us = double(total_ns_.load(std::memory_order_relaxed)) / double(result.count) / 1e3;
    result.max_us = double(max_ns_.load(std::memory_order_relaxed)) / 1e3;
    const double p50_rank = 0.50 * double(result.count);
    const double p99_rank = 0.99 * double(result.count);
    std::uint64_t seen = 0;
    bool have_p50 = false;
    for (std::size_t bucket = 0; bucket < bucket_count; ++bucket) {
        seen += buckets_[bucket].load(std::memory_order_relaxed);
        // A bucket's upper edge, capped by the largest sample seen.
        const double value_us = std::min(bucket_upper_ns(bucket) / 1e3, result.max_us);
        if (!have_p50 && double(seen) >= p50_rank) {
            result.p50_us = value_us;
            have_p50 = true;
        }
        if (double(seen) >= p99_rank) {
            result.p99_us = value_us;
            break;
        }
    }
    return result;
}

void LatencyHistogram::reset() noexcept {
    for (auto& bucket : buckets_) bucket.store(0, std::memory_order_relaxed);
    count_.store(0);
    total_ns_.store(0);
    max_ns_.store(0);
}

}  // namespace vtpage
