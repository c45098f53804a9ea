// Which of this process's threads spent its CPU time, by kind: a thread's system name without a
// trailing number ("vtp-decode 12" is a "vtp-decode"; the library names its threads,
// trace::name_thread). A benchmark samples before and after a measurement and prints each kind's
// share, so that CPU time per page that grew points at the threads that grew it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace vtpage::app {

// A thread's name and CPU time (user + system, in clock ticks) from its /proc/.../stat line;
// nullopt for a line that does not parse. The name may hold spaces and parentheses: it ends at
// the line's last ')'.
struct TaskStat {
    std::string name;
    std::uint64_t ticks = 0;
};
std::optional<TaskStat> parse_task_stat(std::string_view line);

// "vtp-decode 12" -> "vtp-decode"; a name of digits only stays as it is.
std::string thread_kind(std::string_view name);

// The live threads of this process by thread id: kind and CPU seconds so far.
struct ThreadCpuSample {
    std::unordered_map<long, std::pair<std::string, double>> threads;
};
ThreadCpuSample sample_threads();

// CPU seconds by kind between two samples: threads in both count what they spent between them,
// threads started since count all they spent; threads that ended in between are not seen.
std::map<std::string, double> cpu_by_kind_between(const ThreadCpuSample& before,
                                                  const ThreadCpuSample& after);

}  // namespace vtpage::app
