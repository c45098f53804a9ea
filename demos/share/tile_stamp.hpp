// What the share demo's producer writes into each page (a "tile"): a header naming the virtual
// page and the generation of its commit, then words that depend on both and on their place. A
// consumer that read a page the producer had recycled (another page's or another commit's
// bytes) would see a header or a word that does not match what the page map says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vtpage::demo {

inline constexpr std::uint32_t tile_magic = 0x54535456;  // "VTST"
inline constexpr std::size_t tile_header_words = 5;

inline std::uint32_t tile_word(std::uint64_t page, std::uint64_t generation, std::uint64_t i) {
    std::uint64_t x = (page * 0x9E3779B97F4A7C15ull) ^ (generation << 17) ^ i;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return static_cast<std::uint32_t>(x);
}

// Fills `words` (a page's worth) with the tile of (page, generation).
inline void compose_tile(std::uint32_t* words, std::size_t count, std::uint64_t page,
                         std::uint64_t generation) {
    words[0] = tile_magic;
    words[1] = static_cast<std::uint32_t>(page);
    words[2] = static_cast<std::uint32_t>(page >> 32);
    words[3] = static_cast<std::uint32_t>(generation);
    words[4] = static_cast<std::uint32_t>(generation >> 32);
    for (std::size_t i = tile_header_words; i < count; ++i) {
        words[i] = tile_word(page, generation, i);
    }
}

// The number of words that differ from the tile of (page, generation); 0 for a good tile.
inline std::size_t tile_errors(const std::uint32_t* words, std::size_t count, std::uint64_t page,
                               std::uint64_t generation) {
    std::size_t errors = 0;
    errors += words[0] != tile_magic;
    errors += words[1] != static_cast<std::uint32_t>(page);
    errors += words[2] != static_cast<std::uint32_t>(page >> 32);
    errors += words[3] != static_cast<std::uint32_t>(generation);
    errors += words[4] != static_cast<std::uint32_t>(generation >> 32);
    for (std::size_t i = tile_header_words; i < count; ++i) {
        errors += words[i] != tile_word(page, generation, i);
    }
    return errors;
}

}  // namespace vtpage::demo
