#version 460
// Decodes every texel of a list of blocks with shaders/vtpage/block_decode.glsl: invocation
// i decodes texel i % 16 of block i / 16, so that the test compares it with libsquish's.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/block_decode.glsl"

layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Words { uint word[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Texels {
    vec4 texel[];
};

// BlockDecodePush in block_decode_test.cpp.
layout(push_constant, std430) uniform Decode {
    uint64_t blocks;  // block_count blocks of the format, as stored
    uint64_t texels;  // block_count * 16 decoded texels, row by row within a block
    uint format;      // vt::TileFormat: 1 bc1, 2 bc3, 3 bc4, 4 bc5
    uint block_count;
}
decode;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= decode.block_count * 16u) return;
    const uint block = i / 16u;
    const uvec2 texel = uvec2(i % 4u, (i / 4u) % 4u);
    Words words = Words(decode.blocks);
    const bool wide = decode.format == 2u || decode.format == 4u;  // 16-byte blocks
    const uint first = block * (wide ? 4u : 2u);
    const uvec2 low = uvec2(words.word[first], words.word[first + 1u]);
    const uvec4 all =
        wide ? uvec4(low, words.word[first + 2u], words.word[first + 3u]) : uvec4(low, 0u, 0u);
    vec4 result = vec4(-1.0);
    if (decode.format == 1u) result = vt_decode_bc1(low, texel);
    if (decode.format == 2u) result = vt_decode_bc3(all, texel);
    if (decode.format == 3u) result = vt_decode_bc4(low, texel);
    if (decode.format == 4u) result = vt_decode_bc5(all, texel);
    Texels(decode.texels).texel[i] = result;
}
