// A scene fragment's colour (scene.frag through vtpage, scene_reference.frag through ordinary
// sampled images): its material sampled and shaded, or an overlay of the level the base colour
// sampled. Alpha-masked materials discard below their cutoff.
#define VT_FRAGMENT_SHADER
#include "scene_frame.glsl"
#include "vtpage/virtual_texture.glsl"

// needs the two above
#include "scene_material.glsl"

layout(location = 0) in vec3 world;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec2 uv;
layout(location = 3) flat in uint material;
layout(location = 4) flat in vec3 eye;
layout(location = 0) out vec4 colour;

vec3 mip_colour(uint mip) {
    const vec3 palette[8] = vec3[](vec3(0.9, 0.1, 0.1), vec3(0.9, 0.5, 0.1), vec3(0.9, 0.9, 0.1),
                                   vec3(0.2, 0.8, 0.2), vec3(0.1, 0.8, 0.8), vec3(0.2, 0.3, 0.9),
                                   vec3(0.6, 0.2, 0.9), vec3(0.9, 0.3, 0.7));
    return palette[mip % 8u];
}

void main() {
    SceneMaterial m = SceneMaterials(frame.materials).materials[material];
    const SceneSurface surface = scene_surface(world, normal, uv);
    VtSampleInfo info;
    const vec4 shaded = scene_shade(m, surface, eye, info);
    if (m.alpha_mode == 1u && shaded.a < m.roughness_cutoff.y) discard;
    const vec4 encoded = vec4(vt_linear_to_srgb(vec4(shaded.rgb, 1.0)).rgb,
                              m.alpha_mode == 2u ? shaded.a : 1.0);
    if (frame.mode == 0u || !scene_has_texture(m, 0u)) {
        colour = encoded;
        return;
    }
    vec3 tint;
    if (frame.mode == 1u) {
        const uint missing = info.resident_mip - info.wanted_mip;
        tint = missing == 0u ? vec3(0.1, 0.9, 0.1)
                             : mix(vec3(1.0, 0.9, 0.1), vec3(1.0, 0.1, 0.1),
                                   min(float(missing - 1u) / 3.0, 1.0));
    } else {
        tint = mip_colour(info.resident_mip);
    }
    colour = vec4(mix(encoded.rgb, tint, 0.45), 1.0);
}
