// Helpers for the tests of the version-2 bake: photo-like images, the in-core reference mip
// chain (support/reference_levels.hpp) and the command-line tool run as a child
// (support/bake_tool_run.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../support/bake_tool_run.hpp"
#include "../support/reference_levels.hpp"
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

}  // namespace vtpage::test
