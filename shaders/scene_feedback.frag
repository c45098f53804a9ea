#version 460
// The scene's feedback pass: each pixel asks for the tile one of its material's textures wants,
// turning with the pixel and the frame over the material's units (its stack, whose one entry
// stands for all its layers, and each slot that is not a layer of it), so that every texture of a
// material is asked for within a few frames from one entry per pixel. Alpha-masked materials
// discard as the colour pass does, so that hidden texels are not asked for.
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

// The material's stack at its slots' common transformed uv.
uvec2 stack_request(SceneMaterial m, vec2 duv_dx, vec2 duv_dy) {
    VtTexture t = vt_texture(frame.directory, frame.indirection, m.stack);
    const uint slot = m.stack_slot;
    return vt_feedback_aniso(
        t, scene_transform_uv(m, slot, uv), scene_transform_derivative(m, slot, duv_dx),
        scene_transform_derivative(m, slot, duv_dy), frame.lod_bias, frame.max_anisotropy);
}

// The base colour's alpha as the colour pass samples it (its stack's layer where it is one).
float base_alpha(SceneMaterial m, vec2 duv_dx, vec2 duv_dy) {
    const vec2 at = scene_transform_uv(m, 0u, uv);
    const vec2 dx = scene_transform_derivative(m, 0u, duv_dx);
    const vec2 dy = scene_transform_derivative(m, 0u, duv_dy);
    if (scene_in_stack(m, 0u)) {
        VtTexture t = vt_texture(frame.directory, frame.indirection, m.stack);
        return vt_stack_sample_grad(t, at, dx, dy, 0.0).layer[m.stack_layers[0]].a;
    }
    VtTexture t = vt_texture(frame.directory, frame.indirection, m.textures[0]);
    return vt_sample_grad(t, at, dx, dy, 0.0).a;
}

const uint scene_stack_unit = 5u;  // a unit that is the stack, not a slot

void main() {
    SceneMaterial m = SceneMaterials(frame.materials).materials[material];
    const vec2 duv_dx = dFdx(uv), duv_dy = dFdy(uv);
    if (m.alpha_mode == 1u && scene_has_texture(m, 0u)) {
        const float alpha = m.base_colour.a * base_alpha(m, duv_dx, duv_dy);
        if (alpha < m.roughness_cutoff.y) discard;
    }
    uint units[5];
    uint count = 0u;
    if (scene_has_stack(m)) units[count++] = scene_stack_unit;
    for (uint slot = 0u; slot < 5u; ++slot) {
        if (scene_has_texture(m, slot) && !scene_in_stack(m, slot)) units[count++] = slot;
    }
    if (count == 0u) {
        request = uvec2(VT_FEEDBACK_EMPTY, 0u);
        return;
    }
    const uvec2 pixel = uvec2(gl_FragCoord.xy);
    const uint unit = units[(pixel.x + pixel.y * 3u + frame.frame_number) % count];
    request = unit == scene_stack_unit ? stack_request(m, duv_dx, duv_dy)
                                       : slot_request(m, unit, duv_dx, duv_dy);
}
