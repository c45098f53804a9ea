// bake_tool_baker: each image baked by the vtpage-bake program, its stderr kept for the message.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "scene/child_output.hpp"
#include "scene/scene_image_baker.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage::viewer {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The most the tool may write: its messages are a few lines.
constexpr std::uint64_t max_tool_output = std::uint64_t{1} << 20;

std::vector<std::string> tool_arguments(const fs::path& tool, const fs::path& image,
                                        const SceneImageBake& job) {
    const auto mode = [](vt::AddressMode m) {
        return m == vt::AddressMode::repeat            ? "repeat"
               : m == vt::AddressMode::mirrored_repeat ? "mirror"
                                                       : "clamp";
    };
    char memory_gib[32];
    std::snprintf(memory_gib, sizeof memory_gib, "%.3f",
                  std::max(0.25, double(job.max_memory_bytes) / double(1u << 30)));
    std::vector<std::string> arguments = {
        tool.string(),
        image.string(),
        "-o",
        job.output.string(),
        "--quiet",
        "--format",
        vt::tile_format_name(job.format),
        "--address-u",
        mode(job.sampling.address_u),
        "--address-v",
        mode(job.sampling.address_v),
        job.sampling.color_space == vt::ColorSpace::srgb ? "--srgb" : "--linear",
        "--quality",
        job.quality == bake::EncodeQuality::good ? "good" : "fast",
        "--max-memory-gib",
        memory_gib};
    if (job.threads > 0) {
        arguments.insert(arguments.end(), {"--threads", std::to_string(job.threads)});
    }
    return arguments;
}

struct ToolRun {
    int status = 0;
    ChildOutput read = ChildOutput::whole;
    std::string output;  // stderr and stdout
};

// Starts the tool with its output into a pipe, reads it until it ends or the deadline passes
// (then kills it), and reaps it.
ToolRun run_tool(const std::vector<std::string>& arguments, std::chrono::milliseconds deadline) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        throw_errno(Errc::io_error, "bake_tool_baker", "pipe2");
    }
    std::vector<char*> argv;
    argv.reserve(arguments.size() + 1);
    for (const std::string& argument : arguments)
        argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        throw_errno_value(error, Errc::io_error, "bake_tool_baker", "fork");
    }
    if (pid == 0) {  // only async-signal-safe calls until exec
        ::dup2(pipe_fds[1], STDOUT_FILENO);
        ::dup2(pipe_fds[1], STDERR_FILENO);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    ToolRun run;
    std::vector<std::uint8_t> output;
    run.read = read_child_output(pipe_fds[0], Clock::now() + deadline, max_tool_output, output);
    ::close(pipe_fds[0]);
    if (run.read != ChildOutput::whole) ::kill(pid, SIGKILL);
    run.output.assign(output.begin(), output.end());
    while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {}
    return run;
}

// The tool's last non-empty line, without its name.
std::string last_line(std::string output) {
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
    std::string line = output.substr(output.find_last_of('\n') + 1);
    const std::string prefix = "vtpage-bake: ";
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    return line.empty() ? "(no message)" : line;
}

// An embedded image in a file of its own beside the output, for the tool to read.
struct EmbeddedImageFile {
    fs::path path;
    explicit EmbeddedImageFile(const SceneImageBake& job) : path(job.output.string() + ".image") {
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char*>(job.image->embedded.data()),
                   std::streamsize(job.image->embedded.size()));
        if (!file) {
            throw Error(Errc::io_error, "bake_tool_baker",
                        "cannot write the embedded image for the bake", "path=" + path.string());
        }
    }
    ~EmbeddedImageFile() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
    EmbeddedImageFile(const EmbeddedImageFile&) = delete;
    EmbeddedImageFile& operator=(const EmbeddedImageFile&) = delete;
};

void bake_with_tool(const fs::path& tool, std::chrono::milliseconds deadline,
                    const SceneImageBake& job) {
    std::optional<EmbeddedImageFile> embedded;
    if (job.image_file.empty()) embedded.emplace(job);
    const fs::path image = embedded ? embedded->path : job.image_file;
    const ToolRun run = run_tool(tool_arguments(tool, image, job), deadline);
    if (run.read == ChildOutput::too_long) {
        throw Error(Errc::io_error, "bake_tool_baker",
                    detail::concat(tool.string(), " wrote more than ", max_tool_output,
                                   " bytes of messages and was stopped"),
                    "image=" + image.string());
    }
    if (run.read == ChildOutput::late) {
        throw Error(
            Errc::io_error, "bake_tool_baker",
            detail::concat("the bake took longer than ", deadline.count(), " ms and was stopped"),
            "image=" + image.string());
    }
    if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) return;
    if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 2) {
        throw SceneImageRefused(last_line(run.output));
    }
    const std::string how = WIFEXITED(run.status)
                                ? detail::concat("exit status ", WEXITSTATUS(run.status))
                                : detail::concat("signal ", WTERMSIG(run.status));
    throw Error(Errc::io_error, "bake_tool_baker",
                detail::concat(tool.string(), " failed (", how, "): ", last_line(run.output)),
                "image=" + image.string());
}

}  // namespace

SceneImageBaker bake_tool_baker(fs::path tool, std::chrono::milliseconds deadline) {
    return [tool = std::move(tool), deadline](const SceneImageBake& job) {
        bake_with_tool(tool, deadline, job);
    };
}

fs::path find_bake_tool() {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (error) return {};
    // Installed side by side, or in the build tree (demos/viewer and tools/bake).
    for (const fs::path& candidate : {self.parent_path() / "vtpage-bake",
                                      self.parent_path() / "../../tools/bake/vtpage-bake"}) {
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
    }
    return {};
}

}  // namespace vtpage::viewer
