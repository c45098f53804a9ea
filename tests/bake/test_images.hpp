// Images the block-compression tests encode, and the error measure they are judged by. Every
// image is a deterministic function of its size and seed (std::mt19937's output is fixed by
// the standard; its distributions are not, so none is used).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace vtpage::test {

// Rows of RGBA8, width x height.
struct TestImage {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> rgba;
};

// Red and green mostly across and mostly down, blue along the diagonal, alpha against it: smooth
// in every block, with slopes no block format matches exactly.
inline TestImage gradient_image(std::uint32_t size) {
    TestImage image{size, size, std::vector<std::uint8_t>(std::size_t(size) * size * 4)};
    const std::uint32_t last = size - 1;
    for (std::uint32_t y = 0; y < size; ++y) {
        for (std::uint32_t x = 0; x < size; ++x) {
            std::uint8_t* texel = &image.rgba[(std::size_t(y) * size + x) * 4];
            texel[0] = std::uint8_t((3 * x + y) * 255 / (4 * last));
            texel[1] = std::uint8_t((x + 2 * y) * 255 / (3 * last));
            texel[2] = std::uint8_t((x + y) * 255 / (2 * last));
            texel[3] = std::uint8_t(255 - (x + y) * 255 / (2 * last));
        }
    }
    return image;
}

// Every channel of every texel independent and uniform: the worst case for any block format.
inline TestImage noise_image(std::uint32_t size, std::uint32_t seed) {
    TestImage image{size, size, std::vector<std::uint8_t>(std::size_t(size) * size * 4)};
    std::mt19937 random(seed);
    for (std::uint8_t& byte : image.rgba) byte = std::uint8_t(random() >> 24);
    return image;
}

// Like a photograph: smooth shapes of related colours (value noise over 16-texel cells, a
// brightness shared by the channels and a tint of each) with a little grain.
inline TestImage photo_like_image(std::uint32_t size, std::uint32_t seed) {
    constexpr std::uint32_t cell = 16;
    const std::uint32_t cells = size / cell + 2;
    std::mt19937 random(seed);
    auto unit = [&] { return float(random() >> 8) / float(1u << 24); };
    std::vector<float> lattice(std::size_t(cells) * cells * 4);
    for (float& value : lattice) value = unit();
    auto smooth = [&](std::uint32_t x, std::uint32_t y, std::uint32_t channel) {
        const float fx = float(x) / cell;
        const float fy = float(y) / cell;
        const auto ix = std::uint32_t(fx);
        const auto iy = std::uint32_t(fy);
        const float tx = fx - float(ix);
        const float ty = fy - float(iy);
        auto at = [&](std::uint32_t cx, std::uint32_t cy) {
            return lattice[(std::size_t(cy) * cells + cx) * 4 + channel];
        };
        const float top = at(ix, iy) * (1 - tx) + at(ix + 1, iy) * tx;
        const float bottom = at(ix, iy + 1) * (1 - tx) + at(ix + 1, iy + 1) * tx;
        return top * (1 - ty) + bottom * ty;
    };
    TestImage image{size, size, std::vector<std::uint8_t>(std::size_t(size) * size * 4)};
    for (std::uint32_t y = 0; y < size; ++y) {
        for (std::uint32_t x = 0; x < size; ++x) {
            const float brightness = smooth(x, y, 3);
            std::uint8_t* texel = &image.rgba[(std::size_t(y) * size + x) * 4];
            for (std::uint32_t c = 0; c < 4; ++c) {
                const float tint = c == 3 ? 1.0f : 0.6f + 0.4f * smooth(x, y, c);
                const float grain = (float(random() >> 28) - 7.5f) / 255.0f;  // +-8 levels
                const float value = std::fmin(std::fmax(brightness * tint + grain, 0.0f), 1.0f);
                texel[c] = std::uint8_t(std::lround(value * 255.0f));
            }
        }
    }
    return image;
}

// Peak signal-to-noise ratio in dB over the channels in channel_mask (bit c: channel c) of two
// RGBA8 images of the same size; infinity when they are equal there.
inline double psnr(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                   std::uint32_t channel_mask) {
    double squared = 0;
    std::size_t samples = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        if (!(channel_mask & (1u << (i % 4)))) continue;
        const double difference = double(a[i]) - double(b[i]);
        squared += difference * difference;
        ++samples;
    }
    if (squared == 0) return INFINITY;
    return 10.0 * std::log10(255.0 * 255.0 * double(samples) / squared);
}

}  // namespace vtpage::test
