// The body of anisotropy_render_test.comp and its deliberately wrong variants: a plane seen
// through a pinhole camera, each pixel's uv and derivatives worked out exactly from the ray,
// sampled five ways: vtpage isotropic (vt_sample_grad_info), vtpage anisotropic
// (vt_sample_footprint_info, up to push.max_anisotropy probes), the device's sampler at 16x and
// without anisotropy (which shows that its image holds the tiles' texels), and the ground
// truth: the device's sampler without anisotropy at 4 x 4 points of the pixel, each with a
// quarter of the pixel's derivatives, averaged (a 4 x 4 supersampled rendering,
// box-downsampled). vulkan_anisotropy_test.cpp compares them.
// A variant #defines VT_TEST_WRONG_LEVEL (the probes read the major axis's level) or
// VT_TEST_WRONG_AXIS (they lie along the minor axis) before including this file.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2D device_16x;    // anisotropy 16x
layout(set = 0, binding = 1) uniform sampler2D device_plain;  // anisotropy off

// PixelResult in vulkan_anisotropy_test.cpp.
struct PixelResult {
    vec4 isotropic;
    vec4 anisotropic;
    vec4 device;
    vec4 device_isotropic;
    vec4 truth;
    uvec2 feedback_isotropic;
    uvec2 feedback_anisotropic;
    uint covered;  // the whole pixel sees the plane
    uint probes;
    uint wanted_mip;  // the anisotropic sample's
    uint padding;
};

layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Results {
    PixelResult pixels[];
};

// AnisotropyPush in vulkan_anisotropy_test.cpp.
layout(push_constant, std430) uniform Push {
    uint64_t indirection;
    uint64_t directory;
    uint64_t results;
    uint texture_id;
    uint width;
    uint height;
    float max_anisotropy;
    vec4 eye;      // xyz; w: uv per world unit
    vec4 right;    // xyz; w: tan of half the horizontal field of view
    vec4 up;       // xyz; w: tan of half the vertical one
    vec4 forward;  // xyz
}
push;

// The ray through image point p (pixels, y down).
vec3 ray(vec2 p) {
    const vec2 ndc = vec2(p.x / float(push.width), p.y / float(push.height)) * 2.0 - 1.0;
    return push.forward.xyz + ndc.x * push.right.w * push.right.xyz -
           ndc.y * push.up.w * push.up.xyz;
}

// uv where the ray through p meets the plane y = 0 (world x, z scaled).
vec2 plane_uv(vec2 p) {
    const vec3 d = ray(p);
    const vec3 hit = push.eye.xyz + d * (-push.eye.y / d.y);
    return hit.xz * push.eye.w;
}

// uv's derivatives at p for a pixel `h` wide: central differences of the exact mapping.
void derivatives(vec2 p, float h, out vec2 dx, out vec2 dy) {
    dx = plane_uv(p + vec2(0.5 * h, 0.0)) - plane_uv(p - vec2(0.5 * h, 0.0));
    dy = plane_uv(p + vec2(0.0, 0.5 * h)) - plane_uv(p - vec2(0.0, 0.5 * h));
}

vec4 ground_truth(vec2 corner) {
    vec4 sum = vec4(0.0);
    for (uint j = 0u; j < 4u; ++j) {
        for (uint i = 0u; i < 4u; ++i) {
            const vec2 p = corner + (vec2(i, j) + 0.5) * 0.25;
            vec2 dx, dy;
            derivatives(p, 0.25, dx, dy);
            sum += textureGrad(device_plain, plane_uv(p), dx, dy);
        }
    }
    return sum / 16.0;
}

VtAnisotropicFootprint footprint_under_test(VtTexture t, vec2 dx, vec2 dy) {
    VtAnisotropicFootprint footprint =
        vt_anisotropic_footprint(t, dx, dy, 0.0, push.max_anisotropy);
#ifdef VT_TEST_WRONG_LEVEL
    footprint.lod = vt_clamped_lod(t, dx, dy, 0.0);
#endif
#ifdef VT_TEST_WRONG_AXIS
    const bool along_x = length(dx * vec2(t.size)) >= length(dy * vec2(t.size));
    footprint.step = (along_x ? dy : dx) / float(footprint.probes);
#endif
    return footprint;
}

void main() {
    const uvec2 pixel = gl_GlobalInvocationID.xy;
    if (pixel.x >= push.width || pixel.y >= push.height) return;
    PixelResult r;
    const vec2 corner = vec2(pixel);
    const vec2 centre = corner + 0.5;
    // The pixel's upper edge, a little above: every point the samples reach looks down.
    r.covered = ray(vec2(centre.x, corner.y - 0.25)).y < -1e-3 ? 1u : 0u;
    if (r.covered == 0u) {
        Results(push.results).pixels[pixel.y * push.width + pixel.x] = r;
        return;
    }
    VtTexture t = vt_texture(push.directory, push.indirection, push.texture_id);
    const vec2 uv = plane_uv(centre);
    vec2 dx, dy;
    derivatives(centre, 1.0, dx, dy);
    VtSampleInfo info;
    r.isotropic = vt_sample_grad_info(t, uv, dx, dy, 0.0, info);
    const VtAnisotropicFootprint footprint = footprint_under_test(t, dx, dy);
    r.anisotropic = vt_sample_footprint_info(t, uv, footprint, info);
    r.device = textureGrad(device_16x, uv, dx, dy);
    r.device_isotropic = textureGrad(device_plain, uv, dx, dy);
    r.truth = ground_truth(corner);
    r.feedback_isotropic = vt_feedback(t, uv, dx, dy, 0.0);
    r.feedback_anisotropic = vt_feedback_aniso(t, uv, dx, dy, 0.0, push.max_anisotropy);
    r.probes = footprint.probes;
    r.wanted_mip = info.wanted_mip;
    Results(push.results).pixels[pixel.y * push.width + pixel.x] = r;
}
