#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>

extern char** environ;

namespace vtpage::test {

namespace {
std::map<std::string, ChildMain>& modes() {
    static std::map<std::string, ChildMain> registered;
    return registered;
}
}  // namespace

bool register_child_mode(const char* name, ChildMain main) {
    modes()[name] = main;
    return true;
}

bool run_child_mode_if_asked(int argc, char** argv, int& exit_code) {
    if (argc < 3 || std::strcmp(argv[1], "--vtpage-child") != 0) return false;
    auto found = modes().find(argv[2]);
    if (found == modes().end()) {
        std::fprintf(stderr, "unknown child mode %s\n", argv[2]);
        exit_code = 100;
        return true;
    }
    std::vector<std::string> arguments(argv + 3, argv + argc);
    try {
        exit_code = found->second(arguments);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "child mode %s threw: %s\n", argv[2], error.what());
        exit_code = 101;
    }
    return true;
}

ChildResult run_child(const std::string& mode, const std::vector<std::string>& arguments,
                      int inherited_fd, int timeout_seconds) {
    ChildProcess child(mode, arguments, inherited_fd);
    return child.wait(timeout_seconds);
}

ChildProcess::ChildProcess(const std::string& mode, const std::vector<std::string>& arguments,
                           int inherited_fd) {
    int output_pipe[2];
    if (pipe2(output_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 2);
    if (inherited_fd >= 0) posix_spawn_file_actions_adddup2(&actions, inherited_fd, 3);
    std::vector<std::string> words{"/proc/self/exe", "--vtpage-child", mode};
    words.insert(words.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    int spawned = posix_spawn(&pid_, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(output_pipe[1]);
    if (spawned != 0) {
        close(output_pipe[0]);
        throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(spawned));
    }
    const int read_end = output_pipe[0];
    reader_ = std::thread([this, read_end] {
        char buffer[4096];
        for (;;) {
            ssize_t n = ::read(read_end, buffer, sizeof(buffer));
            if (n < 0 && errno == EINTR) continue;
            std::lock_guard lock(mutex_);
            if (n <= 0) {
                output_closed_ = true;
                output_changed_.notify_all();
                break;
            }
            output_.append(buffer, static_cast<std::size_t>(n));
            output_changed_.notify_all();
        }
        close(read_end);
    });
}

ChildProcess::~ChildProcess() {
    if (!reaped_) {
        ::kill(pid_, SIGKILL);
        wait(60);
    }
    if (reader_.joinable()) reader_.join();
}

void ChildProcess::kill(int signal) {
    if (!reaped_) ::kill(pid_, signal);
}

bool ChildProcess::wait_for_output(const std::string& text, int timeout_seconds) {
    std::unique_lock lock(mutex_);
    return output_changed_.wait_for(lock, std::chrono::seconds(timeout_seconds), [&] {
        return output_.find(text) != std::string::npos || output_closed_;
    }) && output_.find(text) != std::string::npos;
}

ChildResult ChildProcess::wait(int timeout_seconds) {
    if (reaped_) return result_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    int status = 0;
    bool killed = false;
    for (;;) {
        pid_t done = waitpid(pid_, &status, WNOHANG);
        if (done == pid_) break;
        if (done < 0 && errno != EINTR) break;
        if (std::chrono::steady_clock::now() > deadline && !killed) {
            ::kill(pid_, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    reaped_ = true;
    if (reader_.joinable()) reader_.join();  // the child's end of the pipe is closed now
    if (WIFEXITED(status) && !killed) {
        result_.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result_.signal = WTERMSIG(status);
    }
    result_.output = output();
    return result_;
}

std::string ChildProcess::output() const {
    std::lock_guard lock(mutex_);
    return output_;
}

}  // namespace vtpage::test
