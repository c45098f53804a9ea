// A scene fragment's colour (scene.frag through vtpage, scene_reference.frag through ordinary
// sampled images): its material sampled and shaded, or an overlay of the level the base colour
// sampled. Alpha-masked materials discard below their cutoff.
//
// Through vtpage the colour pass also counts how closely the frame got the detail it wanted
// (SampleQuality), over the fragments of textured materials it shades: those sampled at the
// level their base colour wanted, and the levels the others fell back by. A fragment that a
// nearer one covers later is counted too (the pass is forward). Each fragment adds its counts to
// one of a few bins, its neighbours to others (a helper invocation's atomics have no effect, so
// helpers add nothing); the host adds the bins up.
#define VT_FRAGMENT_SHADER
#ifdef SCENE_EARLY_FRAGMENT_TESTS
layout(early_fragment_tests) in;
#endif
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

// Bins of (fragments, fragments at the wanted level, levels missing, unused): as the deferred
// pass's (ground_plane_shade.comp), scene_quality_bins of them.
layout(buffer_reference, std430, buffer_reference_align = 16) buffer SceneQualityBins {
    uvec4 bins[];
};
const uint scene_quality_bins = 64u;

// Adds this fragment's (counted, at the wanted level, levels missing).
void count_quality(uvec3 fragment_counts) {
    const uvec2 pixel = uvec2(gl_FragCoord.xy);
    const uint bin = (pixel.x * 7u + pixel.y * 13u) & (scene_quality_bins - 1u);
    SceneQualityBins bins = SceneQualityBins(frame.quality);
    atomicAdd(bins.bins[bin].x, fragment_counts.x);
    if (fragment_counts.y != 0u) atomicAdd(bins.bins[bin].y, fragment_counts.y);
    if (fragment_counts.z != 0u) atomicAdd(bins.bins[bin].z, fragment_counts.z);
}

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
#ifndef SCENE_REFERENCE
    if (frame.quality != 0ul && scene_has_texture(m, 0u)) {
        const uint missing = info.resident_mip - info.wanted_mip;
        count_quality(uvec3(1u, missing == 0u ? 1u : 0u, missing));
    }
#endif
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
