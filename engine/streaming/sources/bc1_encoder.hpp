// A BC1 encoder for one 4 x 4 block, small enough for device code: the bake's encoder
// (libsquish) searches harder, this one runs where tiles are made on the GPU. Only integer
// arithmetic, so that host and device give the same bytes for the same texels; no library
// calls, no allocation; constexpr, and valid C++17 (for nvcc) as well as C++20.
//
// The method: the bounding box of the block's colours, inset by 1/16 of its extent on each
// side (the extremes are rarely worth an endpoint of their own); of the box's four diagonals
// the one that follows the colours' covariance with the widest channel; its ends rounded to
// 5:6:5 as the endpoints; each texel the nearest of the four palette colours. The block always
// uses the 4-colour palette (colour 0 > colour 1): where both ends round to one 5:6:5 colour (a
// block of one colour, say), its neighbour becomes the other end, and a texel takes whichever
// palette entry is nearest. Alpha is ignored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::vt {

// The 8 bytes of a BC1 block as stored: colour 0 and colour 1 (5:6:5, little-endian), then 2
// bits a texel, texel 0 (top left) in the lowest bits, row by row.
struct Bc1Block {
    std::uint8_t bytes[8] = {};
};

namespace bc1_detail {

VTPAGE_HOST_DEVICE constexpr int min_of(int a, int b) { return a < b ? a : b; }
VTPAGE_HOST_DEVICE constexpr int max_of(int a, int b) { return a < b ? b : a; }

// A channel of `bits` widened to 8 bits by repeating its top bits, as decoders do.
VTPAGE_HOST_DEVICE constexpr int expand(int value, int bits) {
    return (value << (8 - bits)) | (value >> (2 * bits - 8));
}

// The `bits`-bit value whose widening is nearest to `value` (0..255).
VTPAGE_HOST_DEVICE constexpr int quantize(int value, int bits) {
    const int top = (1 << bits) - 1;
    const int below = value * top / 255;  // expand(below) <= value: widening never undershoots
    const int above = min_of(below + 1, top);
    const int distance_below = value - expand(below, bits);
    const int distance_above = max_of(expand(above, bits) - value, 0);
    return distance_above < distance_below ? above : below;
}

VTPAGE_HOST_DEVICE constexpr int pack_565(int r, int g, int b) {
    return (quantize(r, 5) << 11) | (quantize(g, 6) << 5) | quantize(b, 5);
}

// Colour `packed` (5:6:5) widened to 8 bits a channel, into rgb[0..2].
VTPAGE_HOST_DEVICE constexpr void unpack_565(int packed, int* rgb) {
    rgb[0] = expand((packed >> 11) & 31, 5);
    rgb[1] = expand((packed >> 5) & 63, 6);
    rgb[2] = expand(packed & 31, 5);
}

}  // namespace bc1_detail

// Encodes the 4 x 4 texels of RGBA8 starting at `texels`, whose rows are `row_pitch` bytes
// apart (16 for a packed block, tile_size * 4 inside a tile), into `out`.
VTPAGE_HOST_DEVICE constexpr void encode_bc1_block(const std::uint8_t* texels,
                                                   std::uint32_t row_pitch, std::uint8_t* out) {
    using namespace bc1_detail;
    int colours[16][3] = {};
    int low[3] = {255, 255, 255};
    int high[3] = {0, 0, 0};
    for (int i = 0; i < 16; ++i) {
        const std::uint8_t* texel =
            texels + std::size_t(i / 4) * row_pitch + std::size_t(i % 4) * 4;
        for (int c = 0; c < 3; ++c) {
            colours[i][c] = texel[c];
            low[c] = min_of(low[c], colours[i][c]);
            high[c] = max_of(high[c], colours[i][c]);
        }
    }

    // The diagonal: the widest channel goes low to high; each other channel runs the same way
    // where it rises with the widest one (covariance >= 0) and the other way where it falls.
    int widest = 0;
    for (int c = 1; c < 3; ++c) {
        if (high[c] - low[c] > high[widest] - low[widest]) widest = c;
    }
    int end0[3] = {};  // the high end of the widest channel
    int end1[3] = {};
    for (int c = 0; c < 3; ++c) {
        int covariance = 0;  // of the doubled distances from the box's centre: no rounding
        for (int i = 0; i < 16; ++i) {
            covariance += (2 * colours[i][widest] - low[widest] - high[widest]) *
                          (2 * colours[i][c] - low[c] - high[c]);
        }
        const int inset = (high[c] - low[c]) >> 4;
        const int inset_low = low[c] + inset;
        const int inset_high = high[c] - inset;
        end0[c] = covariance >= 0 ? inset_high : inset_low;
        end1[c] = covariance >= 0 ? inset_low : inset_high;
    }

    int colour0 = pack_565(end0[0], end0[1], end0[2]);
    int colour1 = pack_565(end1[0], end1[1], end1[2]);
    if (colour0 < colour1) {
        const int swapped = colour0;
        colour0 = colour1;
        colour1 = swapped;
    }
    if (colour0 == colour1) {  // one colour after rounding: a neighbour as the unused other end
        if (colour0 == 0) {
            colour0 = 1;
        } else {
            colour1 = colour0 - 1;
        }
    }

    int palette[4][3] = {};
    unpack_565(colour0, palette[0]);
    unpack_565(colour1, palette[1]);
    for (int c = 0; c < 3; ++c) {
        palette[2][c] = (2 * palette[0][c] + palette[1][c] + 1) / 3;
        palette[3][c] = (palette[0][c] + 2 * palette[1][c] + 1) / 3;
    }
    std::uint32_t indices = 0;
    for (int i = 0; i < 16; ++i) {
        int best = 0;
        int best_distance = 3 * 256 * 256;
        for (int entry = 0; entry < 4; ++entry) {
            int distance = 0;
            for (int c = 0; c < 3; ++c) {
                const int difference = colours[i][c] - palette[entry][c];
                distance += difference * difference;
            }
            if (distance < best_distance) {
                best_distance = distance;
                best = entry;
            }
        }
        indices |= std::uint32_t(best) << (2 * i);
    }

    out[0] = std::uint8_t(colour0 & 0xff);
    out[1] = std::uint8_t(colour0 >> 8);
    out[2] = std::uint8_t(colour1 & 0xff);
    out[3] = std::uint8_t(colour1 >> 8);
    for (int i = 0; i < 4; ++i) out[4 + i] = std::uint8_t(indices >> (8 * i));
}

// The block of 16 packed texels (RGBA8, row by row).
VTPAGE_HOST_DEVICE constexpr Bc1Block encode_bc1_block(const std::uint8_t* texels) {
    Bc1Block block;
    encode_bc1_block(texels, 16, block.bytes);
    return block;
}

}  // namespace vtpage::vt
