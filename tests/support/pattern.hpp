// A position-dependent test pattern that host code and CUDA kernels compute alike: word i of a
// buffer holds pattern_word(i, seed). A page mapped at the wrong place, or a stale page, shows
// as mismatches, where a constant fill or a sum would not notice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define VTPAGE_TEST_HOST_DEVICE __host__ __device__
#else
#define VTPAGE_TEST_HOST_DEVICE
#endif

namespace vtpage::test {

inline VTPAGE_TEST_HOST_DEVICE std::uint32_t pattern_word(std::uint64_t index, std::uint32_t seed) {
    // splitmix64's finaliser: every bit of the index and the seed reaches every bit.
    std::uint64_t x = index * 0x9E3779B97F4A7C15ull + seed;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>(x ^ (x >> 31));
}

// Words [first, first + count) of the pattern.
inline std::vector<std::uint32_t> pattern_words(std::uint64_t first, std::size_t count,
                                                std::uint32_t seed) {
    std::vector<std::uint32_t> words(count);
    for (std::size_t i = 0; i < count; ++i) words[i] = pattern_word(first + i, seed);
    return words;
}

}  // namespace vtpage::test
