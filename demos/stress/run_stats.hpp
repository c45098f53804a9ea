// What one pattern's run counts, from every worker thread at once.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "vtpage/core/latency_histogram.hpp"

namespace vtpage::stress {

// The operations a worker times. access: commit-and-pin a batch, stamp or check it, unpin it;
// commit: the commit-and-pin call alone; verify: the stamps alone; prefetch: request a batch
// and commit from the queue; evict: evict resident pages by hand.
enum class OpKind { access, commit, verify, prefetch, evict };
inline constexpr std::array<OpKind, 5> all_op_kinds = {
    OpKind::access, OpKind::commit, OpKind::verify, OpKind::prefetch, OpKind::evict};
std::string_view to_string(OpKind kind) noexcept;

// Why an operation was refused, when that is part of the game (not a failure of the run).
enum class Refusal { busy, budget, not_resident, injected_fault };

class RunStats {
public:
    LatencyHistogram& latency(OpKind kind) { return latency_[static_cast<int>(kind)]; }
    const LatencyHistogram& latency(OpKind kind) const { return latency_[static_cast<int>(kind)]; }
    void refused(Refusal why) { ++refusals_[static_cast<int>(why)]; }
    std::uint64_t refusals(Refusal why) const { return refusals_[static_cast<int>(why)]; }

    // Integrity errors and unexpected errors are failures of the run; the first messages are
    // kept for the report.
    void integrity_error(const std::string& message);
    void unexpected_error(const std::string& message);
    std::vector<std::string> problems() const;

    std::atomic<std::uint64_t> ops{0};         // page operations of every kind
    std::atomic<std::uint64_t> accessed{0};    // pages accessed (pinned, stamped or checked)
    std::atomic<std::uint64_t> verified{0};    // ... of which checked against their stamps
    std::atomic<std::uint64_t> stamped{0};     // ... of which stamped (first access)
    std::atomic<std::uint64_t> prefetched{0};  // pages prefetches found resident or committed
    std::atomic<std::uint64_t> evicted{0};     // pages evicted by hand
    std::atomic<std::uint64_t> integrity_errors{0};
    std::atomic<std::uint64_t> unexpected_errors{0};
    std::atomic<std::uint64_t> invariant_checks{0};

private:
    void keep(const std::string& message);
    std::array<LatencyHistogram, all_op_kinds.size()> latency_;
    std::array<std::atomic<std::uint64_t>, 4> refusals_{};
    mutable std::mutex mutex_;
    std::vector<std::string> problems_;
};

}  // namespace vtpage::stress
