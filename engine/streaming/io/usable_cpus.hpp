// The CPUs this process may run on: its affinity mask (taskset, a container's cpuset), lowered
// by its cgroup's CPU quota where one is set (a container limited to 4 CPUs on a 64-core host
// sees 64 in its mask but runs at most 4 at a time). Decode threads are sized from it; the
// parsing is apart so that it is tested on any machine.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace vtpage::vt {

// cgroup v2's cpu.max, "<quota> <period>" or "max <period>": quota / period CPUs; nullopt
// when unlimited or not understood.
std::optional<double> cpu_quota_from_cpu_max(std::string_view text);
// cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us: the same (quota -1: unlimited).
std::optional<double> cpu_quota_from_cfs(std::string_view quota, std::string_view period);
// The path of the process's cgroup v2 ("0::<path>" in /proc/self/cgroup), if it has one.
std::optional<std::string_view> cgroup_v2_path(std::string_view proc_self_cgroup);
// The smaller of the affinity count and the quota rounded up, at least 1.
std::size_t usable_cpus_of(std::size_t affinity_cpus, std::optional<double> quota);

// This process's, read now: sched_getaffinity (hardware_concurrency where that fails) and the
// quota of its cgroup (v2, else v1) where the files can be read.
std::size_t usable_cpus();

}  // namespace vtpage::vt
