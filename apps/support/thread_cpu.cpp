#include "vtpage/app/thread_cpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <vector>

namespace vtpage::app {

namespace {

// The fields after the name, split at spaces.
std::vector<std::string_view> fields_after(std::string_view rest) {
    std::vector<std::string_view> fields;
    while (!rest.empty()) {
        const std::size_t start = rest.find_first_not_of(' ');
        if (start == std::string_view::npos) break;
        rest.remove_prefix(start);
        const std::size_t end = std::min(rest.find(' '), rest.size());
        fields.push_back(rest.substr(0, end));
        rest.remove_prefix(end);
    }
    return fields;
}

bool to_number(std::string_view text, std::uint64_t& value) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::optional<TaskStat> parse_task_stat(std::string_view line) {
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
    const std::size_t open = line.find(" (");
    const std::size_t close = line.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open + 2) {
        return std::nullopt;
    }
    // After the name: state (field 3) ... utime (14), stime (15).
    const std::vector<std::string_view> fields = fields_after(line.substr(close + 1));
    constexpr std::size_t utime = 14 - 3, stime = 15 - 3;
    std::uint64_t user = 0, system = 0;
    if (fields.size() <= stime || !to_number(fields[utime], user) ||
        !to_number(fields[stime], system)) {
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
        if (!task || !to_number(entry.path().filename().string(), tid)) continue;
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
