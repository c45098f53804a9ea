// The threads this process has now, for tests that a component leaves none behind.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iterator>

namespace vtpage::test {

inline std::size_t thread_count() {
    const std::filesystem::directory_iterator tasks("/proc/self/task");
    return std::size_t(std::distance(begin(tasks), end(tasks)));
}

// ThreadSanitizer's runtime starts a background thread of its own at a time of its choosing
// (seen under load in CI): one thread more than at the start is the runtime's, not a leak.
#if defined(__SANITIZE_THREAD__)
inline constexpr std::size_t sanitizer_runtime_threads = 1;
#else
inline constexpr std::size_t sanitizer_runtime_threads = 0;
#endif

}  // namespace vtpage::test
