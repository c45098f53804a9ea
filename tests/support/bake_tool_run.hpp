// The bake tool (vtpage-bake) run as a user runs it, from the tests that bake archives with it
// and check what it wrote or said.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace vtpage::test {

// The tool beside the test binaries: <build>/tests/.. -> <build>/tools/bake/vtpage-bake.
inline std::filesystem::path bake_tool_path() {
    return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "tools" /
           "bake" / "vtpage-bake";
}

struct ToolRun {
    int status = -1;
    std::string output;  // stdout and stderr
};

// Runs the tool with the arguments; `shell` goes before it (ulimit, trap). `timeout`: a run that
// hangs (on a FIFO, say) fails its test instead of the whole suite.
inline ToolRun run_bake_tool(const std::string& arguments, const std::string& shell = "") {
    ToolRun result;
    const std::string command =
        shell + "timeout 300 " + bake_tool_path().string() + " " + arguments + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return result;
    std::array<char, 4096> buffer{};
    while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
        result.output.append(buffer.data(), n);
    }
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace vtpage::test
