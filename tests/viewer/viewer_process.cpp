#include "viewer_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

extern char** environ;

namespace vtpage::test {

std::string viewer_path() {
    if (const char* path = std::getenv("VTPAGE_VIEWER")) return path;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    return (self.parent_path().parent_path() / "demos" / "viewer" / "vtpage-viewer").string();
}

std::string find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return {};
    std::string folders = path;
    std::size_t start = 0;
    while (start <= folders.size()) {
        const std::size_t end = std::min(folders.find(':', start), folders.size());
        const std::filesystem::path candidate =
            std::filesystem::path(folders.substr(start, end - start)) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        start = end + 1;
    }
    return {};
}

ProgramResult run_program(const std::vector<std::string>& argv,
                          const std::vector<std::string>& unset, int timeout_seconds) {
    ProgramResult result;
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        result.output = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
    std::vector<char*> arguments;
    for (const std::string& argument : argv)
        arguments.push_back(const_cast<char*>(argument.c_str()));
    arguments.push_back(nullptr);
    const std::set<std::string> dropped(unset.begin(), unset.end());
    std::vector<char*> environment;
    for (char** variable = environ; *variable; ++variable) {
        const std::string entry = *variable;
        if (!dropped.count(entry.substr(0, entry.find('=')))) environment.push_back(*variable);
    }
    environment.push_back(nullptr);
    pid_t pid = -1;
    const int spawned =
        ::posix_spawn(&pid, arguments[0], &actions, nullptr, arguments.data(), environment.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    if (spawned != 0) {
        ::close(pipe_fds[0]);
        result.output = "cannot start " + argv[0] + ": " + std::strerror(spawned);
        return result;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    char buffer[4096];
    bool killed = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 && !killed) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        pollfd poll_fd{pipe_fds[0], POLLIN, 0};
        const int ready =
            ::poll(&poll_fd, 1, killed ? 1000 : int(std::min<long>(left.count(), 1000)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            if (killed) break;  // something it started may hold the pipe: stop reading
            continue;
        }
        const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // every writer has closed: the program (and its children) ended
        result.output.append(buffer, std::size_t(n));
    }
    ::close(pipe_fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    if (killed) result.output += "\n[killed after " + std::to_string(timeout_seconds) + " s]";
    return result;
}

}  // namespace vtpage::test
