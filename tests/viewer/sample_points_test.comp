#version 460
// Samples a virtual texture at a list of points with shaders/vtpage/virtual_texture.glsl's
// vt_sample_grad_info, vt_output_colour and vt_feedback (and the anisotropic ones at 16x), at any uv (far outside [0, 1] too) and
// with the derivatives given: what a fragment shader would compute for the point.
// vulkan_sampling_modes_test.cpp compares the results with each other and with ReferenceSampler.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 64) in;

// SamplePoint in vulkan_sampling_modes_test.cpp.
struct SamplePoint {
    vec2 uv;
    vec2 duv_dx;
    vec2 duv_dy;
    vec2 padding;
};
// PointResult in vulkan_sampling_modes_test.cpp.
struct PointResult {
    vec4 colour;  // vt_sample_grad_info: linear for an sRGB texture
    vec4 output_colour;
    uvec2 feedback;
    uint wanted_mip;
    uint resident_mip;
    uvec2 aniso_feedback;  // vt_feedback_aniso at 16x
    uint aniso_probes;     // vt_anisotropic_footprint's at 16x
    uint padding;
};

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Points {
    SamplePoint points[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Results {
    PointResult results[];
};

// SamplePointsPush in vulkan_sampling_modes_test.cpp.
layout(push_constant, std430) uniform Push {
    uint64_t indirection;
    uint64_t directory;
    uint64_t points;
    uint64_t results;
    uint count;
    uint texture_id;
}
push;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= push.count) return;
    const SamplePoint p = Points(push.points).points[i];
    VtTexture t = vt_texture(push.directory, push.indirection, push.texture_id);
    VtSampleInfo info;
    PointResult r;
    r.colour = vt_sample_grad_info(t, p.uv, p.duv_dx, p.duv_dy, 0.0, info);
    r.output_colour = vt_output_colour(t, r.colour);
    r.feedback = vt_feedback(t, p.uv, p.duv_dx, p.duv_dy, 0.0);
    r.wanted_mip = info.wanted_mip;
    r.resident_mip = info.resident_mip;
    // The anisotropic sample runs too (its colour is not kept): a bad footprint must end.
    const vec4 aniso = vt_sample_grad_aniso(t, p.uv, p.duv_dx, p.duv_dy, 0.0, 16.0);
    r.aniso_feedback = vt_feedback_aniso(t, p.uv, p.duv_dx, p.duv_dy, 0.0, 16.0);
    r.aniso_probes = vt_anisotropic_footprint(t, p.duv_dx, p.duv_dy, 0.0, 16.0).probes;
    r.padding = aniso.a >= 0.0 ? 0u : 1u;
    Results(push.results).results[i] = r;
}
