// The body of parity_render_test.comp and its deliberately wrong variants: a plane seen through
// a pinhole camera, each pixel's uv (an affine map of the plane's coordinates) and derivatives
// worked out exactly from the ray, sampled five ways: vtpage isotropic at the formula's level of
// detail (vt_sample_grad_info) and at the device's (vt_device_lod, from the level-of-detail
// probe), vtpage at push.max_anisotropy (vt_sample_grad_aniso_info), and the device's sampler
// without anisotropy and at its 16x, on an image that holds the tiles' texels with the same address
// modes and colour space. Every colour is written as the image would show it
// (vt_output_colour: an sRGB texture's linear sample encoded back). vulkan_image_parity_test.cpp
// compares them.
// A variant #defines VT_TEST_WRONG_WRAP (a repeating axis clamped), VT_TEST_WRONG_SRGB (sRGB
// decoded after filtering instead of before) or VT_TEST_WRONG_LOD (a level of detail one too
// coarse) before including this file; each changes vtpage's samples only.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(set = 0, binding = 2) uniform sampler2D lod_probe;  // VulkanLodProbe
#define VT_LOD_PROBE lod_probe
#define VT_LOD_PROBE_ENABLED false  // vt_lod keeps the formula; vt_device_lod is called below
#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2D device_16x;    // anisotropy 16x
layout(set = 0, binding = 1) uniform sampler2D device_plain;  // anisotropy off

// ParityPixel in vulkan_image_parity_test.cpp.
struct ParityPixel {
    vec4 isotropic;
    vec4 isotropic_device_lod;
    vec4 anisotropic;
    vec4 device_isotropic;
    vec4 device_anisotropic;
    uint covered;  // the whole pixel sees the plane
    uint padding[3];
};

layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Results {
    ParityPixel pixels[];
};

// ParityPush in vulkan_image_parity_test.cpp.
layout(push_constant, std430) uniform Push {
    uint64_t indirection;
    uint64_t directory;
    uint64_t results;
    uint texture_id;
    uint width;
    uint height;
    float max_anisotropy;
    vec4 eye;      // xyz; w: uv's offset along u
    vec4 right;    // xyz; w: tan of half the horizontal field of view
    vec4 up;       // xyz; w: tan of half the vertical one
    vec4 forward;  // xyz; w: uv's offset along v
    vec4 uv_map;   // u = x * uv_map.x + z * uv_map.y, v = x * uv_map.z + z * uv_map.w, + offset
}
push;

// The ray through image point p (pixels, y down).
vec3 ray(vec2 p) {
    const vec2 ndc = vec2(p.x / float(push.width), p.y / float(push.height)) * 2.0 - 1.0;
    return push.forward.xyz + ndc.x * push.right.w * push.right.xyz -
           ndc.y * push.up.w * push.up.xyz;
}

// uv where the ray through p meets the plane y = 0.
vec2 plane_uv(vec2 p) {
    const vec3 d = ray(p);
    const vec2 hit = (push.eye.xyz + d * (-push.eye.y / d.y)).xz;
    return vec2(dot(hit, push.uv_map.xy), dot(hit, push.uv_map.zw)) +
           vec2(push.eye.w, push.forward.w);
}

// uv's derivatives at p: central differences of the exact mapping, a pixel apart.
void derivatives(vec2 p, out vec2 dx, out vec2 dy) {
    dx = plane_uv(p + vec2(0.5, 0.0)) - plane_uv(p - vec2(0.5, 0.0));
    dy = plane_uv(p + vec2(0.0, 0.5)) - plane_uv(p - vec2(0.0, 0.5));
}

// The texture as the variant under test sees it.
VtTexture texture_under_test(VtTexture t) {
#ifdef VT_TEST_WRONG_WRAP
    if (t.address.x == VT_ADDRESS_REPEAT) t.address.x = VT_ADDRESS_CLAMP_TO_EDGE;
    if (t.address.y == VT_ADDRESS_REPEAT) t.address.y = VT_ADDRESS_CLAMP_TO_EDGE;
#endif
#ifdef VT_TEST_WRONG_SRGB
    t.color_space = VT_COLOR_SPACE_LINEAR;  // filters the encoded texels
#endif
    return t;
}

// A sample of the texture under test, decoded where the variant filtered encoded texels.
vec4 decoded(VtTexture t, vec4 sampled) {
#ifdef VT_TEST_WRONG_SRGB
    if (t.color_space == VT_COLOR_SPACE_SRGB) return vt_srgb_to_linear(sampled);
#endif
    return sampled;
}

vec4 isotropic_under_test(VtTexture t, vec2 uv, vec2 dx, vec2 dy) {
    VtSampleInfo info;
#ifdef VT_TEST_WRONG_LOD
    const float lod = min(vt_clamped_lod(t, dx, dy, 0.0) + 1.0, float(t.mip_count - 1u));
    return vt_sample_lod_info(t, uv, lod, info);
#else
    return vt_sample_grad_info(t, uv, dx, dy, 0.0, info);
#endif
}

// The isotropic sample at the device's level of detail.
vec4 device_lod_under_test(VtTexture t, vec2 uv, vec2 dx, vec2 dy) {
    VtSampleInfo info;
    const float last = float(t.mip_count - 1u);
    float lod = clamp(vt_device_lod(t.size, dx, dy), 0.0, last);
#ifdef VT_TEST_WRONG_LOD
    lod = min(lod + 1.0, last);
#endif
    return vt_sample_lod_info(t, uv, lod, info);
}

void main() {
    const uvec2 pixel = gl_GlobalInvocationID.xy;
    if (pixel.x >= push.width || pixel.y >= push.height) return;
    ParityPixel r;
    const vec2 corner = vec2(pixel);
    const vec2 centre = corner + 0.5;
    // The pixel's upper edge, a little above: every point the derivatives reach looks down.
    r.covered = ray(vec2(centre.x, corner.y - 0.25)).y < -1e-3 ? 1u : 0u;
    if (r.covered == 0u) {
        Results(push.results).pixels[pixel.y * push.width + pixel.x] = r;
        return;
    }
    VtTexture t = vt_texture(push.directory, push.indirection, push.texture_id);
    VtTexture tested = texture_under_test(t);
    const vec2 uv = plane_uv(centre);
    vec2 dx, dy;
    derivatives(centre, dx, dy);
    VtSampleInfo info;
    r.isotropic = vt_output_colour(t, decoded(t, isotropic_under_test(tested, uv, dx, dy)));
    r.isotropic_device_lod =
        vt_output_colour(t, decoded(t, device_lod_under_test(tested, uv, dx, dy)));
    r.anisotropic = vt_output_colour(
        t, decoded(t, vt_sample_grad_aniso_info(tested, uv, dx, dy, 0.0, push.max_anisotropy,
                                                info)));
    r.device_isotropic = vt_output_colour(t, textureGrad(device_plain, uv, dx, dy));
    r.device_anisotropic = vt_output_colour(t, textureGrad(device_16x, uv, dx, dy));
    Results(push.results).pixels[pixel.y * push.width + pixel.x] = r;
}
