#version 460
// The ground plane's sample positions for the deferred textured pass: per pixel the uv and the
// level of detail that the forward pass (ground_plane.frag) would sample at, and in w the
// plane's texture id + 1 (the cleared 0 marks the sky; floats hold ids exactly up to 2^24):
// each plane of a scene samples its own texture. ground_plane_shade.comp samples them.
#define VT_FRAGMENT_SHADER
#include "ground_plane_frame.glsl"
#include "vtpage/virtual_texture.glsl"

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 sample_position;

void main() {
    VtTexture t = vt_texture(frame.directory, frame.indirection, frame.texture_id);
    sample_position = vec4(uv, vt_clamped_lod(t, dFdx(uv), dFdy(uv), frame.lod_bias),
                           float(frame.texture_id + 1u));
}
