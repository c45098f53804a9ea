#include "streaming/io/usable_cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace vtpage::vt {

namespace {

std::string_view trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\n");
    return text.substr(first, last - first + 1);
}

// A whole number, the whole text (after trimming); nullopt otherwise.
std::optional<long long> whole_number(std::string_view text) {
    text = trimmed(text);
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

std::optional<double> quota_over_period(std::optional<long long> quota,
                                        std::optional<long long> period) {
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return double(*quota) / double(*period);
}

// The whole file, or nothing where it cannot be read.
std::optional<std::string> read_text(const std::string& path) {
    std::ifstream file(path);
    if (!file) return std::nullopt;
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

std::size_t affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        return std::size_t(CPU_COUNT(&set));
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<double> smaller(std::optional<double> a, std::optional<double> b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

// The process's own cgroup and those above it (a quota may be set on any of them; the
// smallest binds), or the root that a container with its own cgroup namespace sees.
std::optional<double> cgroup_v2_quota() {
    std::optional<double> quota;
    if (std::optional<std::string> own = read_text("/proc/self/cgroup")) {
        if (std::optional<std::string_view> path = cgroup_v2_path(*own)) {
            std::string folder(*path);
            while (folder.size() > 1) {
                if (auto text = read_text("/sys/fs/cgroup" + folder + "/cpu.max")) {
                    quota = smaller(quota, cpu_quota_from_cpu_max(*text));
                }
                const std::size_t slash = folder.rfind('/');
                if (slash == std::string::npos) break;
                folder.resize(slash);
            }
        }
    }
    if (auto text = read_text("/sys/fs/cgroup/cpu.max")) {
        quota = smaller(quota, cpu_quota_from_cpu_max(*text));
    }
    return quota;
}

std::optional<double> cgroup_v1_quota() {
    for (const char* folder : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
        const std::string base(folder);
        auto quota = read_text(base + "/cpu.cfs_quota_us");
        auto period = read_text(base + "/cpu.cfs_period_us");
        if (quota && period) return cpu_quota_from_cfs(*quota, *period);
    }
    return std::nullopt;
}

}  // namespace

std::optional<double> cpu_quota_from_cpu_max(std::string_view text) {
    text = trimmed(text);
    const auto space = text.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view quota = text.substr(0, space);
    if (quota == "max") return std::nullopt;
    return quota_over_period(whole_number(quota), whole_number(text.substr(space + 1)));
}

std::optional<double> cpu_quota_from_cfs(std::string_view quota, std::string_view period) {
    return quota_over_period(whole_number(quota), whole_number(period));
}

std::optional<std::string_view> cgroup_v2_path(std::string_view proc_self_cgroup) {
    while (!proc_self_cgroup.empty()) {
        const auto end = proc_self_cgroup.find('\n');
        const std::string_view line = proc_self_cgroup.substr(0, end);
        if (line.starts_with("0::")) return trimmed(line.substr(3));
        if (end == std::string_view::npos) break;
        proc_self_cgroup.remove_prefix(end + 1);
    }
    return std::nullopt;
}

std::size_t usable_cpus_of(std::size_t affinity_cpus, std::optional<double> quota) {
    std::size_t cpus = std::max<std::size_t>(1, affinity_cpus);
    if (quota && std::isfinite(*quota) && *quota > 0) {
        // A quota of 1.5 CPUs still runs two threads at once, for part of each period.
        cpus = std::min(cpus, std::size_t(std::ceil(*quota)));
    }
    return std::max<std::size_t>(1, cpus);
}

std::size_t usable_cpus() {
    std::optional<double> quota = cgroup_v2_quota();
    if (!quota) quota = cgroup_v1_quota();
    return usable_cpus_of(affinity_cpus(), quota);
}

}  // namespace vtpage::vt
