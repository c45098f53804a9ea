#version 460
// --stack: samples a material stack (BC1 sRGB colour + BC4 channel, repeating) across the screen
// at 16x anisotropy, one lookup for both layers, and writes the stack's one feedback entry.
#include "vtpage/virtual_texture.glsl"

layout(push_constant, std430) uniform Frame {
    uint64_t indirection;  // VirtualTextureStreaming::indirection_address()
    uint64_t directory;    // VirtualTextureStreaming::directory_address()
    uint texture_id;       // the stack's
    float uv_per_pixel;
} frame;

layout(location = 0) out vec4 colour;
layout(location = 1) out uvec2 feedback;

void main() {
    // Half the screen past uv 1 on each axis: the repeat's seam runs through the image.
    vec2 uv = (gl_FragCoord.xy + 128.0) * frame.uv_per_pixel;
    VtTexture t = vt_texture(frame.directory, frame.indirection, frame.texture_id);
    const VtStackSample s = vt_stack_sample_grad_aniso(t, uv, dFdx(uv), dFdy(uv), 0.0, 16.0);
    colour = vec4(vt_stack_output_colour(t, 0u, s.layer[0]).rgb, s.layer[1].r);  // UNORM target
    feedback = vt_feedback_aniso(t, uv, dFdx(uv), dFdy(uv), 0.0, 16.0);
}
