#include "vtpage/app/cpu_usage.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <string>

#include "proc_fields.hpp"

namespace vtpage::app {

namespace {

double process_cpu_seconds() {
    rusage usage{};
    if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double ticks_between(std::uint64_t before, std::uint64_t after) {
    return after > before ? double(after - before) : 0.0;
}

}  // namespace

std::optional<MachineTicks> parse_proc_stat_cpu(std::string_view line) {
    constexpr std::string_view label = "cpu ";
    if (line.substr(0, label.size()) != label) return std::nullopt;
    line.remove_prefix(label.size());
    // user nice system idle iowait irq softirq steal
    std::array<std::uint64_t, 8> field{};
    for (std::uint64_t& value : field) {
        if (!detail::parse_count(detail::next_field(line), value)) return std::nullopt;
    }
    const auto [user, nice, system, idle, iowait, irq, softirq, steal] = field;
    return MachineTicks{
        .busy = user + nice + system + irq + softirq, .idle = idle + iowait, .steal = steal};
}

CpuSample sample_cpu() {
    CpuSample sample;
    sample.when = std::chrono::steady_clock::now();
    sample.process_seconds = process_cpu_seconds();
    std::ifstream stat("/proc/stat");
    std::string line;
    if (stat && std::getline(stat, line)) sample.machine = parse_proc_stat_cpu(line);
    return sample;
}

CpuUsage cpu_usage_between(const CpuSample& before, const CpuSample& after,
                           double ticks_per_second) {
    CpuUsage usage;
    usage.seconds = std::max(0.0, std::chrono::duration<double>(after.when - before.when).count());
    usage.process_seconds = std::max(0.0, after.process_seconds - before.process_seconds);
    if (usage.seconds <= 0) return usage;
    usage.process_cores = usage.process_seconds / usage.seconds;
    if (!before.machine || !after.machine || !(ticks_per_second > 0)) return usage;
    const double per_tick = 1.0 / (ticks_per_second * usage.seconds);
    const double busy = ticks_between(before.machine->busy, after.machine->busy) * per_tick;
    usage.machine_known = true;
    // The process's time and the machine's ticks are counted apart: what is left of the busy
    // cores once this process's are taken out is everything else's, never below zero.
    usage.other_cores = std::max(0.0, busy - usage.process_cores);
    usage.steal_cores = ticks_between(before.machine->steal, after.machine->steal) * per_tick;
    usage.idle_cores = ticks_between(before.machine->idle, after.machine->idle) * per_tick;
    return usage;
}

CpuUsage cpu_usage_since(const CpuSample& before) {
    const long ticks = ::sysconf(_SC_CLK_TCK);
    return cpu_usage_between(before, sample_cpu(), ticks > 0 ? double(ticks) : 0.0);
}

}  // namespace vtpage::app
