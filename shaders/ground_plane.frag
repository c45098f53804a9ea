#version 460
// The ground plane's colour: the virtual texture, or an overlay of what was resident.
#define VT_FRAGMENT_SHADER
#include "ground_plane_frame.glsl"
#include "vtpage/virtual_texture.glsl"

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 colour;

vec3 mip_colour(uint mip) {
    const vec3 palette[8] = vec3[](vec3(0.9, 0.1, 0.1), vec3(0.9, 0.5, 0.1), vec3(0.9, 0.9, 0.1),
                                   vec3(0.2, 0.8, 0.2), vec3(0.1, 0.8, 0.8), vec3(0.2, 0.3, 0.9),
                                   vec3(0.6, 0.2, 0.9), vec3(0.9, 0.3, 0.7));
    return palette[mip % 8u];
}

void main() {
    VtTexture t = vt_texture(frame.directory, frame.indirection, frame.texture_id);
    VtSampleInfo info;
    // The target is UNORM: an sRGB texture's linear sample is encoded back for it.
    const vec4 texel = vt_output_colour(t, vt_sample_grad_aniso_info(t, uv, dFdx(uv), dFdy(uv),
                                                                     frame.lod_bias,
                                                                     frame.max_anisotropy, info));
    if (frame.mode == 0u) {
        colour = texel;
        return;
    }
    // Tile edges of the level actually sampled, drawn as thin dark lines.
    const VtLevelPosition position = vt_level_position(t, info.resident_mip, uv);
    const float payload = float(t.tile_payload);
    const vec2 in_tile = mod(position.c, payload);
    const vec2 edge_width = fwidth(position.c) * 1.5;
    const bool edge = any(lessThan(in_tile, edge_width)) ||
                      any(greaterThan(in_tile, vec2(payload) - edge_width));
    vec3 tint;
    if (frame.mode == 1u) {
        // Residency: green where the wanted level was resident, yellow to red as the sample
        // falls back further.
        const uint missing = info.resident_mip - info.wanted_mip;
        tint = missing == 0u ? vec3(0.1, 0.9, 0.1)
                             : mix(vec3(1.0, 0.9, 0.1), vec3(1.0, 0.1, 0.1),
                                   min(float(missing - 1u) / 3.0, 1.0));
    } else {
        tint = mip_colour(info.resident_mip);
    }
    colour = vec4(mix(texel.rgb, tint, 0.45) * (edge ? 0.35 : 1.0), 1.0);
}
