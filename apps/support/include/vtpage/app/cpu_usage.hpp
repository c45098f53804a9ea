// How the machine's cores were spent over a stretch of time: by this process, by everything else,
// and taken by the hypervisor for other guests (steal), each in cores on average. A benchmark
// prints it beside its rows, so that a row that fell because the machine was busy tells itself
// apart from one that fell because the code got slower: the first keeps its CPU time per page
// and loses cores to others or to steal, the second spends more CPU time per page.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vtpage::app {

// The machine's CPU time since boot in clock ticks (sysconf(_SC_CLK_TCK) a second), summed
// over its CPUs: the first line of /proc/stat.
struct MachineTicks {
    std::uint64_t busy = 0;   // user, nice, system, irq, softirq (guests are inside user)
    std::uint64_t idle = 0;   // idle, iowait
    std::uint64_t steal = 0;  // running other guests while this one had work
};

// The "cpu " line of /proc/stat; nullopt for any other line, or one with fewer than the 8
// fields up to steal, or a field that is not a plain number.
std::optional<MachineTicks> parse_proc_stat_cpu(std::string_view line);

struct CpuSample {
    std::chrono::steady_clock::time_point when{};
    std::optional<MachineTicks> machine;  // none where /proc/stat cannot be read
    double process_seconds = 0;           // user + system time of all of this process's threads
};

CpuSample sample_cpu();

struct CpuUsage {
    double seconds = 0;          // wall time between the samples
    double process_seconds = 0;  // CPU time this process spent in it
    double process_cores = 0;    // process_seconds / seconds
    // Where both samples read /proc/stat: the cores everything else kept busy, those the
    // hypervisor took (steal) and those left idle, on average.
    bool machine_known = false;
    double other_cores = 0;
    double steal_cores = 0;
    double idle_cores = 0;
};

// Between two samples, with `ticks_per_second` clock ticks a second. Counters that went back
// (a sample taken out of order) count as zero.
CpuUsage cpu_usage_between(const CpuSample& before, const CpuSample& after,
                           double ticks_per_second);
// From `before` until now, with the system's clock ticks.
CpuUsage cpu_usage_since(const CpuSample& before);

}  // namespace vtpage::app
