// vtpage-gpu-pressure as a benchmark runs it: bad flags exit 2 naming the flag; on a machine
// without a GPU it exits 3 and says so (the GPU cases then skip with its message); with a GPU it
// allocates, holds, and lets go at a line "release", at the end of stdin or at SIGTERM.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int exit_no_device = 3;

// The tool beside this test binary, in a build or in a copy of its programs (.ci/gpu-stage):
// <build>/tests/.. -> <build>/tools/gpu_pressure/vtpage-gpu-pressure.
std::string tool_path() {
    return (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "tools" /
            "gpu_pressure" / "vtpage-gpu-pressure")
        .string();
}

// The program, started with a pipe on its stdin and one for its stdout and stderr together.
// Every wait has a deadline; a program still running at the end is killed.
class PressureProcess {
public:
    explicit PressureProcess(const std::vector<std::string>& arguments) {
        int input[2], output[2];
        if (::pipe2(input, O_CLOEXEC) != 0 || ::pipe2(output, O_CLOEXEC) != 0) return;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&actions, output[1], STDERR_FILENO);
        std::vector<std::string> words{tool_path()};
        words.insert(words.end(), arguments.begin(), arguments.end());
        std::vector<char*> argv;
        for (std::string& word : words) argv.push_back(word.data());
        argv.push_back(nullptr);
        if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&actions);
        ::close(input[0]);
        ::close(output[1]);
        stdin_ = input[1];
        stdout_ = output[0];
    }
    ~PressureProcess() {
        close_stdin();
        if (pid_ > 0 && exit_code_ == not_exited) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (stdout_ >= 0) ::close(stdout_);
    }
    bool started() const { return pid_ > 0; }
    const std::string& output() const { return output_; }

    void write_line(const std::string& line) {
        const std::string text = line + "\n";
        ASSERT_EQ(::write(stdin_, text.data(), text.size()), ssize_t(text.size()));
    }
    void close_stdin() {
        if (stdin_ >= 0) ::close(stdin_);
        stdin_ = -1;
    }
    void signal(int number) { ::kill(pid_, number); }

    // Reads until the output holds `text` or ends; false if it ended or `timeout` passed first.
    bool wait_for_output(const std::string& text, Clock::duration timeout) {
        const auto deadline = Clock::now() + timeout;
        while (output_.find(text) == std::string::npos) {
            if (!read_some(deadline)) return false;
        }
        return true;
    }
    // Reads to the end of the output and reaps the program; -1 if it did not end in `timeout`
    // (it is killed then), the exit code otherwise.
    int wait_for_exit(Clock::duration timeout) {
        const auto deadline = Clock::now() + timeout;
        while (read_some(deadline)) {}
        while (exit_code_ == not_exited && Clock::now() < deadline) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            } else {
                ::usleep(10000);
            }
        }
        return exit_code_ == not_exited ? -1 : exit_code_;
    }

private:
    static constexpr int not_exited = -2;

    // Appends what the program wrote; false at the end of its output or at the deadline.
    bool read_some(Clock::time_point deadline) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (stdout_ < 0 || left.count() <= 0) return false;
        pollfd ready{stdout_, POLLIN, 0};
        if (::poll(&ready, 1, int(left.count())) <= 0) return false;
        char buffer[4096];
        const ssize_t n = ::read(stdout_, buffer, sizeof(buffer));
        if (n <= 0) return false;
        output_.append(buffer, std::size_t(n));
        return true;
    }

    pid_t pid_ = -1;
    int stdin_ = -1;
    int stdout_ = -1;
    int exit_code_ = not_exited;
    std::string output_;
};

TEST(GpuPressureTool, BadFlagsExitTwoNamingTheFlag) {
    struct Case {
        std::vector<std::string> arguments;
        std::string message;
    };
    const Case cases[] = {
        {{"--mib", "nan"}, "--mib: 'nan' is not a whole number"},
        {{"--mib", "-1"}, "--mib: '-1' is not a whole number"},
        {{"--mib", "0"}, "--mib: 0 is not a whole number"},
        {{"--mib", "99999999999999999999"}, "--mib: 99999999999999999999 is not"},
        {{"--mib", "512", "--step-mib", "0"}, "--step-mib: 0 is not a whole number"},
        {{"--mib", "512", "--hold-seconds", "nan"}, "--hold-seconds: 'nan' is not a finite"},
        {{"--mib", "512", "--hold-seconds", "-1"}, "--hold-seconds: -1 is not a finite"},
        {{"--mib", "512", "--hold-seconds", "3601"}, "--hold-seconds: 3601 is not a finite"},
        {{"--leave-free-mib", "1e3"}, "--leave-free-mib: '1e3' is not a whole number"},
        {{"--mib", "512", "--device", "-1"}, "--device: '-1' is not a whole number"},
        {{"--mib", "512", "--sideways"}, "The following argument was not expected: --sideways"},
        {{}, "--mib or --leave-free-mib is required"},
    };
    for (const Case& c : cases) {
        PressureProcess tool(c.arguments);
        ASSERT_TRUE(tool.started()) << tool_path();
        EXPECT_EQ(tool.wait_for_exit(30s), 2) << tool.output();
        EXPECT_NE(tool.output().find("vtpage-gpu-pressure: " + c.message), std::string::npos)
            << tool.output();
    }
}

// Starts a run that must reach "holding"; skips with the program's message where there is no
// GPU (exit 3), after checking that message.
#define START_HOLDING(tool, ...)                                                           \
    PressureProcess tool({__VA_ARGS__});                                                   \
    ASSERT_TRUE(tool.started()) << tool_path();                                            \
    if (!tool.wait_for_output("holding", 120s)) {                                          \
        const int status = tool.wait_for_exit(30s);                                        \
        ASSERT_EQ(status, exit_no_device) << tool.output();                                \
        ASSERT_NE(tool.output().find("vtpage-gpu-pressure: no GPU to take memory from: "), \
                  std::string::npos)                                                       \
            << tool.output();                                                              \
        GTEST_SKIP() << "no GPU: " << tool.output();                                       \
    }                                                                                      \
    static_assert(true)

TEST(GpuPressureTool, HoldsWhatItAllocatedUntilReleased) {
    START_HOLDING(tool, "--device", "0", "--mib", "512", "--hold-seconds", "30");
    EXPECT_NE(tool.output().find("allocated 256 MiB, device free "), std::string::npos)
        << tool.output();
    EXPECT_NE(tool.output().find("allocated 512 MiB, device free "), std::string::npos)
        << tool.output();
    EXPECT_TRUE(tool.wait_for_output("holding 512 MiB\n", 5s)) << tool.output();
    const auto released = Clock::now();
    tool.write_line("release");
    EXPECT_TRUE(tool.wait_for_output("released\n", 20s)) << tool.output();
    EXPECT_EQ(tool.wait_for_exit(20s), 0) << tool.output();
    EXPECT_LT(Clock::now() - released, 20s) << "the release did not end the hold";
    EXPECT_NE(tool.output().find("released after 'release' read on stdin"), std::string::npos)
        << tool.output();
}

TEST(GpuPressureTool, TheEndOfStdinOrSigtermEndsTheHold) {
    {
        START_HOLDING(tool, "--mib", "64", "--step-mib", "32", "--hold-seconds", "60");
        tool.close_stdin();  // what a parent that dies does
        EXPECT_EQ(tool.wait_for_exit(20s), 0) << tool.output();
        EXPECT_NE(tool.output().find("released after stdin closed"), std::string::npos)
            << tool.output();
    }
    {
        START_HOLDING(tool, "--mib", "64", "--hold-seconds", "60");
        tool.signal(SIGTERM);
        EXPECT_EQ(tool.wait_for_exit(20s), 0) << tool.output();
        EXPECT_NE(tool.output().find("released\n"), std::string::npos) << tool.output();
        EXPECT_NE(tool.output().find("released after a signal to end"), std::string::npos)
            << tool.output();
    }
}

TEST(GpuPressureTool, TheHoldEndsAtItsDeadline) {
    START_HOLDING(tool, "--mib", "32", "--hold-seconds", "0.5");
    EXPECT_EQ(tool.wait_for_exit(20s), 0) << tool.output();
    EXPECT_NE(tool.output().find("released after the hold time passed"), std::string::npos)
        << tool.output();
}

}  // namespace
