// The content the page-sharing tests write into a page: every word depends on the virtual page,
// its generation and the word's place, so that a reader that sees a recycled page (another
// page's or another generation's bytes) notices.
#pragma once

#include <cstdint>
#include <vector>

#include "vtpage/backend/backend.hpp"

namespace vtpage::test {

inline std::uint32_t stamp_word(std::uint64_t page, std::uint64_t generation, std::uint64_t i) {
    std::uint64_t x = (page << 40) ^ (generation << 20) ^ i;
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return static_cast<std::uint32_t>(x >> 32);
}

inline std::vector<std::uint32_t> stamp(std::uint64_t page, std::uint64_t generation,
                                        std::size_t bytes) {
    std::vector<std::uint32_t> words(bytes / sizeof(std::uint32_t));
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = stamp_word(page, generation, i);
    return words;
}

inline void write_stamp(Backend& backend, DeviceAddress address, std::uint64_t page,
                        std::uint64_t generation, std::size_t bytes) {
    auto words = stamp(page, generation, bytes);
    backend.write(address, words.data(), bytes);
}

// Whether the bytes at address are exactly the stamp of (page, generation).
inline bool has_stamp(Backend& backend, DeviceAddress address, std::uint64_t page,
                      std::uint64_t generation, std::size_t bytes) {
    std::vector<std::uint32_t> words(bytes / sizeof(std::uint32_t));
    backend.read(words.data(), address, bytes);
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i] != stamp_word(page, generation, i)) return false;
    }
    return true;
}

}  // namespace vtpage::test
