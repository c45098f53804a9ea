#version 460
// The scene's feedback pass: each pixel asks for the tile one of its material's textures wants,
// the slot turning with the pixel and the frame, so that every slot of a material is asked for
// within a few frames from one entry per pixel. Alpha-masked materials discard as the colour
// pass does, so that hidden texels are not asked for.
#define VT_FRAGMENT_SHADER
#include "scene_frame.glsl"
#include "vtpage/virtual_texture.glsl"

layout(location = 2) in vec2 uv;
layout(location = 3) flat in uint material;
layout(location = 0) out uvec2 request;

// The uv's derivatives are taken before any branch (they need every pixel of the quad).
uvec2 slot_request(SceneMaterial m, uint slot, vec2 duv_dx, vec2 duv_dy) {
    VtTexture t = vt_texture(frame.directory, frame.indirection, m.textures[slot]);
    return vt_feedback_aniso(
        t, scene_transform_uv(m, slot, uv), scene_transform_derivative(m, slot, duv_dx),
        scene_transform_derivative(m, slot, duv_dy), frame.lod_bias, frame.max_anisotropy);
}

void main() {
    SceneMaterial m = SceneMaterials(frame.materials).materials[material];
    const vec2 duv_dx = dFdx(uv), duv_dy = dFdy(uv);
    if (m.alpha_mode == 1u && scene_has_texture(m, 0u)) {
        VtTexture t = vt_texture(frame.directory, frame.indirection, m.textures[0]);
        const float alpha =
            m.base_colour.a * vt_sample_grad(t, scene_transform_uv(m, 0u, uv),
                                             scene_transform_derivative(m, 0u, duv_dx),
                                             scene_transform_derivative(m, 0u, duv_dy), 0.0)
                                  .a;
        if (alpha < m.roughness_cutoff.y) discard;
    }
    uint slots[5];
    uint count = 0u;
    for (uint slot = 0u; slot < 5u; ++slot) {
        if (scene_has_texture(m, slot)) slots[count++] = slot;
    }
    if (count == 0u) {
        request = uvec2(VT_FEEDBACK_EMPTY, 0u);
        return;
    }
    const uvec2 pixel = uvec2(gl_FragCoord.xy);
    const uint turn = (pixel.x + pixel.y * 3u + frame.frame_number) % count;
    request = slot_request(m, slots[turn], duv_dx, duv_dy);
}
