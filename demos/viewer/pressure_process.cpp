#include "pressure_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <thread>
#include <vector>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

extern char** environ;

namespace vtpage::viewer {

namespace {

// posix_spawn with the socket's other end as the child's stdin and stdout sent to stderr, so that
// its progress lines join the viewer's.
pid_t spawn_with_input(const std::vector<std::string>& arguments, int read_end, int write_end) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, read_end, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, read_end);
    posix_spawn_file_actions_addclose(&actions, write_end);
    std::vector<char*> argv;
    argv.reserve(arguments.size() + 1);
    for (const std::string& argument : arguments)
        argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
        throw_errno_value(error, Errc::io_error, "PressureProcess", "cannot start the program",
                          arguments[0]);
    }
    return pid;
}

}  // namespace

PressureProcess::PressureProcess(const PressureSettings& settings) {
    // A socket rather than a pipe: writing to it after the program ended is an error
    // (MSG_NOSIGNAL), not a SIGPIPE that ends the viewer.
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
        throw_errno(Errc::io_error, "PressureProcess", "socketpair");
    }
    UniqueFd read_end(ends[0]);
    input_.reset(ends[1]);
    std::vector<std::string> arguments = {settings.tool, "--device",
                                          std::to_string(settings.device), "--hold-seconds",
                                          std::to_string(settings.hold_seconds)};
    if (settings.mib > 0) {
        arguments.insert(arguments.end(), {"--mib", std::to_string(settings.mib)});
    } else {
        arguments.insert(arguments.end(),
                         {"--leave-free-mib", std::to_string(settings.leave_free_mib)});
    }
    pid_ = spawn_with_input(arguments, read_end.get(), input_.get());
}

PressureProcess::~PressureProcess() {
    release();
    if (wait(std::chrono::seconds(10)) >= 0) return;
    kill(pid_, SIGKILL);
    wait(std::chrono::seconds(2));
}

void PressureProcess::release() noexcept {
    if (!input_) return;
    constexpr char line[] = "release\n";
    [[maybe_unused]] const ssize_t written =
        ::send(input_.get(), line, sizeof(line) - 1, MSG_NOSIGNAL);
    input_.reset();  // EOF: the program ends on that too
}

int PressureProcess::wait(std::chrono::milliseconds timeout) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (status_ < 0) {
        int status = 0;
        const pid_t done = waitpid(pid_, &status, WNOHANG);
        if (done == pid_ || (done < 0 && errno != EINTR)) {
            status_ = done == pid_ && WIFEXITED(status) ? WEXITSTATUS(status) : 128;
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) return -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status_;
}

std::string find_pressure_tool() {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return {};
    // Installed side by side, or in the build tree (demos/viewer and tools/gpu_pressure).
    for (const std::filesystem::path& candidate :
         {self.parent_path() / "vtpage-gpu-pressure",
          self.parent_path() / "../../tools/gpu_pressure/vtpage-gpu-pressure"}) {
        if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal().string();
    }
    return {};
}

}  // namespace vtpage::viewer
