// The identity texture's words in GLSL, word for word those of
// engine/include/streaming/sources/identity_pattern.hpp (uint arithmetic wraps as C++'s does):
// the word at word index `texel` of layout page `page` of the texture tagged `texture`. A layout
// page names the mip and the page's place in it, the word index the tile and the texel in it.
#ifndef VTPAGE_IDENTITY_PATTERN_GLSL
#define VTPAGE_IDENTITY_PATTERN_GLSL

uint vt_identity_mix32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// Layout pages of the 2^20 textures stay below 2^32: the high half of the page is 0.
uint vt_identity_page_seed(uint texture, uint page) {
    uint h = vt_identity_mix32(texture * 0x9e3779b9u + 0x632be5abu);
    h = vt_identity_mix32(h ^ page);
    return vt_identity_mix32(h);
}

uint vt_identity_texel_word(uint texture, uint page, uint texel) {
    return vt_identity_mix32(vt_identity_page_seed(texture, page) ^ texel);
}

#endif
