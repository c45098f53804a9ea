// The reference mip chain the bake and streaming tests check against, written apart from the
// library's builders: Vulkan's chain down to 1 x 1 for any W x H, each texel the rounded mean of
// the four below it, coordinates clamped to the level. RGBA8, in core and spelled out.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vtpage::test {

// One level: RGBA8, width x height, row by row.
struct ReferenceLevel {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> texels;

    // The texel at (x, y), coordinates clamped to the level.
    const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const {
        x = std::min(x, width - 1);
        y = std::min(y, height - 1);
        return &texels[(std::size_t(y) * width + x) * 4];
    }
};

// The level below `fine`: half its size (at least 1 x 1), each texel (a + b + c + d + 2) / 4.
inline ReferenceLevel next_reference_level(const ReferenceLevel& fine) {
    ReferenceLevel coarse{std::max(1u, fine.width / 2), std::max(1u, fine.height / 2), {}};
    coarse.texels.resize(std::size_t(coarse.width) * coarse.height * 4);
    for (std::uint32_t y = 0; y < coarse.height; ++y) {
        for (std::uint32_t x = 0; x < coarse.width; ++x) {
            for (int c = 0; c < 4; ++c) {
                const unsigned sum = fine.at(2 * x, 2 * y)[c] + fine.at(2 * x + 1, 2 * y)[c] +
                                     fine.at(2 * x, 2 * y + 1)[c] +
                                     fine.at(2 * x + 1, 2 * y + 1)[c];
                coarse.texels[(std::size_t(y) * coarse.width + x) * 4 + c] =
                    std::uint8_t((sum + 2) / 4);
            }
        }
    }
    return coarse;
}

// The whole chain from level 0 down to 1 x 1.
inline std::vector<ReferenceLevel> reference_levels(ReferenceLevel level0) {
    std::vector<ReferenceLevel> levels{std::move(level0)};
    while (levels.back().width > 1 || levels.back().height > 1) {
        levels.push_back(next_reference_level(levels.back()));
    }
    return levels;
}

}  // namespace vtpage::test
