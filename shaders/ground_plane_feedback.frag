#version 460
// The feedback pass: at a reduced resolution, each pixel writes the tile it wants as a
// FeedbackEntry (uvec2, the packing of feedback_entry.hpp).
#include "ground_plane_frame.glsl"
#include "vtpage/virtual_texture.glsl"

layout(location = 0) in vec2 uv;
layout(location = 0) out uvec2 request;

void main() {
    VtTexture t = vt_texture(frame.directory, frame.indirection, frame.texture_id);
    request = vt_feedback_aniso(t, uv, dFdx(uv), dFdy(uv), frame.lod_bias, frame.max_anisotropy);
}
