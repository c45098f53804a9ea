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

// Both 5:6:5 endpoints of a colour block (colour 0 in the low half of the word) widened to 8
// bits a channel, in 0..255. Both halves are widened at once: the shifts and masks keep the
// halves apart, and every instruction counts on GPUs that shade fragments on few cores.
void vt_expand_565_pair(uint colours, out vec3 endpoint0, out vec3 endpoint1) {
    const uint r = (colours >> 11) & 0x001f001fu;
    const uint g = (colours >> 5) & 0x003f003fu;
    const uint b = colours & 0x001f001fu;
    const uint r8 = (r << 3) | ((r >> 2) & 0x00070007u);
    const uint g8 = (g << 2) | ((g >> 4) & 0x00030003u);
    const uint b8 = (b << 3) | ((b >> 2) & 0x00070007u);
    endpoint0 = vec3(float(r8 & 0xffu), float(g8 & 0xffu), float(b8 & 0xffu));
    endpoint1 = vec3(float(r8 >> 16), float(g8 >> 16), float(b8 >> 16));
}

// The colour block of BC1 (three_colour_allowed) or BC3 (not): words 0 and 1. Branch-free: each
// 2-bit index picks endpoint 1's weight from a table of nibbles (thirds for the 4-colour palette:
// 0, 3, 1, 2; halves for the 3-colour one: 0, 2, 1), so the lanes of a group never diverge.
vec4 vt_decode_colour_block(uvec2 block, uvec2 texel, bool three_colour_allowed) {
    vec3 endpoint0, endpoint1;
    vt_expand_565_pair(block.x, endpoint0, endpoint1);
    const uint index = (block.y >> (2u * vt_block_texel_index(texel))) & 3u;
    const bool four_colours = (block.x & 0xffffu) > (block.x >> 16) || !three_colour_allowed;
    const uint weights = four_colours ? 0x2130u : 0x0120u;
    const float weight =
        float((weights >> (4u * index)) & 15u) * (four_colours ? 1.0 / 3.0 : 0.5);
    // The 3-colour palette's index 3 is transparent black.
    const float alpha = !four_colours && index == 3u ? 0.0 : 1.0;
    return vec4(mix(endpoint0, endpoint1, weight) * (alpha / 255.0), alpha);
}

// One channel of a BC4 block (BC3's alpha, each of BC5's two halves): words 0 and 1.
// Branch-free as the colour block: the 3-bit code picks level 1's weight from a table (sevenths
// for the 8-level palette: 0, 7, 1..6; fifths for the 6-level one: 0, 5, 1..4, then 0 and 1).
float vt_decode_level_block(uvec2 block, uvec2 texel) {
    const float level0 = float(block.x & 0xffu);
    const float level1 = float((block.x >> 8) & 0xffu);
    // 3-bit codes from bit 16 of the 64-bit block on (bits 16, 19, ..., 61: never a multiple
    // of 32, so neither shift below is by 32); texel 5's code straddles the two words.
    const uint bit = 16u + 3u * vt_block_texel_index(texel);
    const uint word = bit < 32u ? block.x : block.y;
    const uint next = bit < 32u ? block.y : 0u;
    const uint shift = bit & 31u;
    const uint code = ((word >> shift) | (next << (32u - shift))) & 7u;
    const bool eight_levels = level0 > level1;
    const uint weights = eight_levels ? 0x65432170u : 0x00432150u;
    const float weight = float((weights >> (4u * code)) & 15u) * (eight_levels ? 1.0 / 7.0 : 0.2);
    const float value = mix(level0, level1, weight) / 255.0;
    return eight_levels || code < 6u ? value : float(code - 6u);
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
