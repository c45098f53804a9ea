// Decoding one texel of one BC1, BC3, BC4 or BC5 block, for shaders that read block-compressed
// tiles from buffers rather than through a sampler. A block is passed as the 32-bit words it is
// stored as (little-endian: word 0 holds bytes 0..3), a texel as its (x, y) in the block, 0..3.
// Results are unorm, in [0, 1].
//
// As the BC formats specify: BC1's endpoints are RGB 5:6:5, widened to 8 bits by repeating
// their top bits (as the D3D reference decoder and libsquish do); its palette has 4 colours
// when colour 0 > colour 1 and otherwise 3 and transparent black. BC3's colour block always
// has 4 colours. BC4's (and BC3's alpha) palette has 8 levels when level 0 > level 1 and
// otherwise 6, 0 and 1. Palette entries between the endpoints are interpolated exactly, where
// libsquish truncates to 8 bits: the two differ by less than 1/255.
#ifndef VTPAGE_BLOCK_DECODE_GLSL
#define VTPAGE_BLOCK_DECODE_GLSL

// The texel's place among the block's 16, row by row.
uint vt_block_texel_index(uvec2 texel) { return texel.y * 4u + texel.x; }

// A 5:6:5 colour widened to 8 bits a channel, in 0..255.
vec3 vt_expand_565(uint colour) {
    const uint r = (colour >> 11) & 31u;
    const uint g = (colour >> 5) & 63u;
    const uint b = colour & 31u;
    return vec3(float((r << 3) | (r >> 2)), float((g << 2) | (g >> 4)), float((b << 3) | (b >> 2)));
}

// The colour block of BC1 (three_colour_allowed) or BC3 (not): words 0 and 1.
vec4 vt_decode_colour_block(uvec2 block, uvec2 texel, bool three_colour_allowed) {
    const uint colour0 = block.x & 0xffffu;
    const uint colour1 = block.x >> 16;
    const vec3 endpoint0 = vt_expand_565(colour0);
    const vec3 endpoint1 = vt_expand_565(colour1);
    const uint index = (block.y >> (2u * vt_block_texel_index(texel))) & 3u;
    vec3 colour;
    if (index == 0u) {
        colour = endpoint0;
    } else if (index == 1u) {
        colour = endpoint1;
    } else if (colour0 > colour1 || !three_colour_allowed) {
        colour =
            index == 2u ? (2.0 * endpoint0 + endpoint1) / 3.0 : (endpoint0 + 2.0 * endpoint1) / 3.0;
    } else if (index == 2u) {
        colour = (endpoint0 + endpoint1) / 2.0;
    } else {
        return vec4(0.0);  // the 3-colour palette's transparent black
    }
    return vec4(colour / 255.0, 1.0);
}

// One channel of a BC4 block (BC3's alpha, each of BC5's two halves): words 0 and 1.
float vt_decode_level_block(uvec2 block, uvec2 texel) {
    const uint level0 = block.x & 0xffu;
    const uint level1 = (block.x >> 8) & 0xffu;
    // 3-bit codes from bit 16 of the 64-bit block on; texel 5's code straddles the two words.
    const uint bit = 16u + 3u * vt_block_texel_index(texel);
    uint code;
    if (bit >= 32u) {
        code = (block.y >> (bit - 32u)) & 7u;
    } else if (bit <= 29u) {
        code = (block.x >> bit) & 7u;
    } else {
        code = ((block.x >> bit) | (block.y << (32u - bit))) & 7u;
    }
    if (code == 0u) return float(level0) / 255.0;
    if (code == 1u) return float(level1) / 255.0;
    if (level0 > level1) {
        return (float(8u - code) * float(level0) + float(code - 1u) * float(level1)) /
               (7.0 * 255.0);
    }
    if (code == 6u) return 0.0;
    if (code == 7u) return 1.0;
    return (float(6u - code) * float(level0) + float(code - 1u) * float(level1)) / (5.0 * 255.0);
}

// BC1 (RGB, 4 bits a texel; alpha 0 only for the 3-colour palette's transparent black).
vec4 vt_decode_bc1(uvec2 block, uvec2 texel) { return vt_decode_colour_block(block, texel, true); }

// BC3: words 0 and 1 the alpha block, 2 and 3 the colour block.
vec4 vt_decode_bc3(uvec4 block, uvec2 texel) {
    return vec4(vt_decode_colour_block(block.zw, texel, false).rgb,
                vt_decode_level_block(block.xy, texel));
}

// BC4: red, as (r, 0, 0, 1).
vec4 vt_decode_bc4(uvec2 block, uvec2 texel) {
    return vec4(vt_decode_level_block(block, texel), 0.0, 0.0, 1.0);
}

// BC5: red in words 0 and 1, green in 2 and 3, as (r, g, 0, 1).
vec4 vt_decode_bc5(uvec4 block, uvec2 texel) {
    return vec4(vt_decode_level_block(block.xy, texel), vt_decode_level_block(block.zw, texel), 0.0,
                1.0);
}

#endif  // VTPAGE_BLOCK_DECODE_GLSL
