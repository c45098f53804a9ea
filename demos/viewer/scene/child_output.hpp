// What a child process writes into a pipe, read by its parent up to a deadline and a size: the
// scene reader's reply (isolated_scene_reader.cpp) and the bake tool's messages
// (scene_bake_tool.cpp). A child cannot extend the wait by trickling bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace vtpage::viewer {

enum class ChildOutput {
    whole,     // the child closed its end
    late,      // the deadline passed first
    too_long,  // it wrote more than allowed
};

// Reads `fd` until the child closes it, at most until `until` and at most `most` bytes in all.
ChildOutput read_child_output(int fd, std::chrono::steady_clock::time_point until,
                              std::uint64_t most, std::vector<std::uint8_t>& output);

}  // namespace vtpage::viewer
