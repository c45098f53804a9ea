// Helpers for the tests of the version-2 bake: photo-like images, the in-core reference mip
// chain (written apart from MipPyramidBuilder), and the command-line tool run as a child
// (support/bake_tool_run.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../support/bake_tool_run.hpp"
#include "vips_test_images.hpp"

namespace vtpage::test {

// Smooth waves plus a little noise, as a photo has: bands 1 .. 4, 8 or 16 bits a sample.
inline SampleImage photo_like(std::uint32_t width, std::uint32_t height, std::uint32_t bands,
                              std::uint32_t seed, bool sixteen_bits = false) {
    SampleImage image{width,
                      height,
                      bands,
                      sixteen_bits ? VIPS_FORMAT_USHORT : VIPS_FORMAT_UCHAR,
                      bands <= 2
                          ? (sixteen_bits ? VIPS_INTERPRETATION_GREY16 : VIPS_INTERPRETATION_B_W)
                          : (sixteen_bits ? VIPS_INTERPRETATION_RGB16 : VIPS_INTERPRETATION_sRGB),
                      {}};
    const std::size_t sample_bytes = sixteen_bits ? 2 : 1;
    image.bytes.resize(std::size_t(width) * height * bands * sample_bytes);
    std::uint32_t state = seed * 2654435761u + 7;
    std::size_t at = 0;
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            for (std::uint32_t b = 0; b < bands; ++b) {
                state = state * 1664525u + 1013904223u;
                const double wave =
                    128 + 70 * std::sin(x / (37.0 + 11 * b) + seed) * std::cos(y / (53.0 + 7 * b)) +
                    30 * std::sin((x + 2.0 * y) / (19.0 + 5 * b));
                const double noise = double(state >> 24) / 255.0 * 12 - 6;
                const double v = std::clamp(wave + noise, 0.0, 255.0) / 255.0;
                if (sixteen_bits) {
                    const auto s = std::uint16_t(std::lround(v * 65535));
                    image.bytes[at++] = std::uint8_t(s & 0xff);
                    image.bytes[at++] = std::uint8_t(s >> 8);
                } else {
                    image.bytes[at++] = std::uint8_t(std::lround(v * 255));
                }
            }
        }
    }
    return image;
}

inline int save_png(VipsImage* in, const char* path) { return vips_pngsave(in, path, nullptr); }

// One level of the reference chain: RGBA8, width x height.
struct ReferenceLevel {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> texels;
    const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const {
        return &texels[(std::size_t(y) * width + x) * 4];
    }
};

// Vulkan's chain down to 1 x 1, each texel the rounded mean of the four below it, coordinates
// clamped to the level: the box filter, in core and spelled out.
inline std::vector<ReferenceLevel> reference_levels(ReferenceLevel level0) {
    std::vector<ReferenceLevel> levels{std::move(level0)};
    while (levels.back().width > 1 || levels.back().height > 1) {
        const ReferenceLevel& fine = levels.back();
        ReferenceLevel coarse{std::max(1u, fine.width / 2), std::max(1u, fine.height / 2), {}};
        coarse.texels.resize(std::size_t(coarse.width) * coarse.height * 4);
        for (std::uint32_t y = 0; y < coarse.height; ++y) {
            const std::uint32_t y0 = 2 * y, y1 = std::min(2 * y + 1, fine.height - 1);
            for (std::uint32_t x = 0; x < coarse.width; ++x) {
                const std::uint32_t x0 = 2 * x, x1 = std::min(2 * x + 1, fine.width - 1);
                for (int c = 0; c < 4; ++c) {
                    const unsigned sum = fine.at(x0, y0)[c] + fine.at(x1, y0)[c] +
                                         fine.at(x0, y1)[c] + fine.at(x1, y1)[c];
                    coarse.texels[(std::size_t(y) * coarse.width + x) * 4 + c] =
                        std::uint8_t((sum + 2) / 4);
                }
            }
        }
        levels.push_back(std::move(coarse));
    }
    return levels;
}

}  // namespace vtpage::test
