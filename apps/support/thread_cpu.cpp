#include "vtpage/app/thread_cpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "proc_fields.hpp"

namespace vtpage::app {

std::optional<TaskStat> parse_task_stat(std::string_view line) {
    const std::size_t open = line.find(" (");
    const std::size_t close = line.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open + 2) {
        return std::nullopt;
    }
    // After the name: state (field 3) ... utime (14), stime (15).
    std::string_view rest = line.substr(close + 1);
    for (int field = 3; field < 14; ++field) detail::next_field(rest);
    std::uint64_t user = 0, system = 0;
    if (!detail::parse_count(detail::next_field(rest), user) ||
        !detail::parse_count(detail::next_field(rest), system)) {
        return std::nullopt;
    }
    return TaskStat{std::string(line.substr(open + 2, close - open - 2)), user + system};
}

std::string thread_kind(std::string_view name) {
    std::size_t end = name.size();
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
    if (end == 0) return std::string(name);
    while (end > 0 && name[end - 1] == ' ') --end;
    return std::string(name.substr(0, end));
}

ThreadCpuSample sample_threads() {
    ThreadCpuSample sample;
    const long ticks = ::sysconf(_SC_CLK_TCK);
    if (ticks <= 0) return sample;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", error)) {
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!stat || !std::getline(stat, line)) continue;  // ended meanwhile
        const std::optional<TaskStat> task = parse_task_stat(line);
        std::uint64_t tid = 0;
        if (!task || !detail::parse_count(entry.path().filename().string(), tid)) continue;
        sample.threads[long(tid)] = {thread_kind(task->name), double(task->ticks) / double(ticks)};
    }
    return sample;
}

std::map<std::string, double> cpu_by_kind_between(const ThreadCpuSample& before,
                                                  const ThreadCpuSample& after) {
    std::map<std::string, double> kinds;
    for (const auto& [tid, thread] : after.threads) {
        const auto& [kind, seconds] = thread;
        double spent = seconds;
        // A thread id reused by a thread of another kind is a new thread.
        if (auto found = before.threads.find(tid);
            found != before.threads.end() && found->second.first == kind) {
            spent = std::max(0.0, seconds - found->second.second);
        }
        kinds[kind] += spent;
    }
    return kinds;
}

}  // namespace vtpage::app
