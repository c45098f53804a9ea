// The reference mip chain the bake and streaming tests check against, written apart from the
// library's builders: Vulkan's chain down to 1 x 1 for any W x H, each texel the rounded mean of
// the four below it, coordinates clamped to the level; for sRGB colour, the colour channels'
// mean taken in linear light (the sRGB transfer function straight from its definition). RGBA8,
// in core and spelled out.
#pragma once

#include <algorithm>
#include <cmath>
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

// IEC 61966-2-1: an 8-bit sRGB value's linear light, and linear light's nearest 8-bit value.
inline double reference_srgb_decode(std::uint8_t encoded) {
    const double e = encoded / 255.0;
    return e <= 0.04045 ? e / 12.92 : std::pow((e + 0.055) / 1.055, 2.4);
}
inline std::uint8_t reference_srgb_encode(double linear) {
    const double l = std::clamp(linear, 0.0, 1.0);
    const double e = l <= 0.0031308 ? 12.92 * l : 1.055 * std::pow(l, 1 / 2.4) - 0.055;
    return std::uint8_t(std::lround(e * 255));
}

// The level below `fine`: half its size (at least 1 x 1), each texel (a + b + c + d + 2) / 4, or
// with `srgb` the colour channels encode((decode(a) + ... + decode(d)) / 4) (alpha as stored).
inline ReferenceLevel next_reference_level(const ReferenceLevel& fine, bool srgb = false) {
    ReferenceLevel coarse{std::max(1u, fine.width / 2), std::max(1u, fine.height / 2), {}};
    coarse.texels.resize(std::size_t(coarse.width) * coarse.height * 4);
    for (std::uint32_t y = 0; y < coarse.height; ++y) {
        for (std::uint32_t x = 0; x < coarse.width; ++x) {
            const std::uint8_t* four[] = {fine.at(2 * x, 2 * y), fine.at(2 * x + 1, 2 * y),
                                          fine.at(2 * x, 2 * y + 1), fine.at(2 * x + 1, 2 * y + 1)};
            for (int c = 0; c < 4; ++c) {
                std::uint8_t& out = coarse.texels[(std::size_t(y) * coarse.width + x) * 4 + c];
                if (srgb && c < 3) {
                    double sum = 0;
                    for (const std::uint8_t* texel : four) sum += reference_srgb_decode(texel[c]);
                    out = reference_srgb_encode(sum / 4);
                } else {
                    unsigned sum = 0;
                    for (const std::uint8_t* texel : four) sum += texel[c];
                    out = std::uint8_t((sum + 2) / 4);
                }
            }
        }
    }
    return coarse;
}

// The whole chain from level 0 down to 1 x 1.
inline std::vector<ReferenceLevel> reference_levels(ReferenceLevel level0, bool srgb = false) {
    std::vector<ReferenceLevel> levels{std::move(level0)};
    while (levels.back().width > 1 || levels.back().height > 1) {
        levels.push_back(next_reference_level(levels.back(), srgb));
    }
    return levels;
}

}  // namespace vtpage::test
