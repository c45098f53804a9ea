#version 460
// Samples the virtual texture across the screen and writes, per pixel, the tile it wanted
// (the feedback that drives streaming).
#include "vtpage/virtual_texture.glsl"

layout(push_constant, std430) uniform Frame {
    uint64_t indirection;  // VirtualTextureStreaming::indirection_address()
    uint64_t directory;    // VirtualTextureStreaming::directory_address()
    uint texture_id;
    float uv_per_pixel;
} frame;

layout(location = 0) out vec4 colour;
layout(location = 1) out uvec2 feedback;

void main() {
    vec2 uv = gl_FragCoord.xy * frame.uv_per_pixel;
    VtTexture t = vt_texture(frame.directory, frame.indirection, frame.texture_id);
    colour = vt_output_colour(t, vt_sample_grad(t, uv, dFdx(uv), dFdy(uv), 0.0));  // UNORM target
    feedback = vt_feedback(t, uv, dFdx(uv), dFdy(uv), 0.0);
}
