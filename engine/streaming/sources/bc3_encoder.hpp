// A BC3 encoder for one 4 x 4 block, for the same places as the BC1 encoder beside it (tiles made
// on the GPU and their CPU twins): integer arithmetic only, so host and device give the same
// bytes; constexpr, and valid C++17 (for nvcc) as well as C++20.
//
// A BC3 block is an alpha block (BC4's layout) followed by a colour block (BC1's layout, always
// decoded with the 4-colour palette). The alpha block takes the block's lowest and highest alpha
// as its endpoints, highest first, so that the palette has 8 levels, and each texel the nearest
// level; a block of one alpha has both endpoints equal and every code 0, which decodes exactly.
// The colour block is encode_bc1_block's, with its endpoints in the 4-colour order (colour 0 >
// colour 1; equal endpoints with every index 0). BC3's palette does not depend on that order, but
// some decoders apply BC1's rule to BC3 as well: in that order every decoder gives the same
// colours. encode_bc1_block orders its endpoints so already; the BC3 block does not rely on it.
#pragma once

#include <cstdint>

#include "streaming/sources/bc1_encoder.hpp"

namespace vtpage::vt {

// The 16 bytes of a BC3 block as stored: alpha 0 and alpha 1, 3 bits a texel (texel 0 in the
// lowest bits, row by row), then the colour block as Bc1Block.
struct Bc3Block {
    std::uint8_t bytes[16] = {};
};

namespace bc3_detail {

// The alpha (byte 3) of the 4 x 4 texels of RGBA8 at `texels` as the 8 bytes of a BC4 block.
VTPAGE_HOST_DEVICE constexpr void encode_alpha_block(const std::uint8_t* texels,
                                                     std::uint32_t row_pitch, std::uint8_t* out) {
    using bc1_detail::max_of;
    using bc1_detail::min_of;
    int alphas[16] = {};
    int low = 255;
    int high = 0;
    for (int i = 0; i < 16; ++i) {
        alphas[i] = texels[(i / 4) * row_pitch + (i % 4) * 4 + 3];
        low = min_of(low, alphas[i]);
        high = max_of(high, alphas[i]);
    }
    // Level k of the 8-level palette is high + k / 7 * (low - high), k = 0..7; it is stored as
    // code 0 for k = 0, code 1 for k = 7 and code k + 1 between.
    std::uint64_t codes = 0;
    const int range = high - low;
    for (int i = 0; range > 0 && i < 16; ++i) {
        const int k = (14 * (high - alphas[i]) + range) / (2 * range);  // the nearest level
        const int code = k == 0 ? 0 : k == 7 ? 1 : k + 1;
        codes |= std::uint64_t(code) << (3 * i);
    }
    out[0] = std::uint8_t(high);
    out[1] = std::uint8_t(low);
    for (int i = 0; i < 6; ++i) out[2 + i] = std::uint8_t(codes >> (8 * i));
}

// Puts the endpoints of a colour block whose indices address the 4-colour palette in the order
// colour 0 > colour 1 without changing what it decodes to: swapped endpoints and each index's
// low bit flipped (0 <-> 1, 2 <-> 3) name the same colours; equal endpoints make one colour,
// named by index 0 everywhere.
VTPAGE_HOST_DEVICE constexpr void order_four_colour_endpoints(std::uint8_t* block) {
    const int colour0 = block[0] | (block[1] << 8);
    const int colour1 = block[2] | (block[3] << 8);
    if (colour0 > colour1) return;
    if (colour0 == colour1) {
        for (int i = 4; i < 8; ++i) block[i] = 0;
        return;
    }
    for (int i = 0; i < 2; ++i) {
        const std::uint8_t byte = block[i];
        block[i] = block[i + 2];
        block[i + 2] = byte;
    }
    for (int i = 4; i < 8; ++i) block[i] = std::uint8_t(block[i] ^ 0x55);
}

}  // namespace bc3_detail

// Encodes the 4 x 4 texels of RGBA8 starting at `texels`, whose rows are `row_pitch` bytes
// apart (16 for a packed block, tile_size * 4 inside a tile), into the 16 bytes at `out`.
VTPAGE_HOST_DEVICE constexpr void encode_bc3_block(const std::uint8_t* texels,
                                                   std::uint32_t row_pitch, std::uint8_t* out) {
    bc3_detail::encode_alpha_block(texels, row_pitch, out);
    encode_bc1_block(texels, row_pitch, out + 8);
    bc3_detail::order_four_colour_endpoints(out + 8);
}

// The block of 16 packed texels (RGBA8, row by row).
VTPAGE_HOST_DEVICE constexpr Bc3Block encode_bc3_block(const std::uint8_t* texels) {
    Bc3Block block;
    encode_bc3_block(texels, 16, block.bytes);
    return block;
}

}  // namespace vtpage::vt
