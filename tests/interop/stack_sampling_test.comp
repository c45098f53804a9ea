#version 460
// Samples material stacks and their layers at a list of points with shaders/vtpage/
// virtual_texture.glsl: vt_stack_sample_grad_info and vt_stack_sample_grad_aniso_info on the
// stack, vt_sample_grad_info and vt_sample_grad_aniso_info on each layer's own texture, and the
// feedback of both. stack_sampling_test.cpp compares them.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 64) in;

// StackPoint in stack_sampling_test.cpp.
struct StackPoint {
    vec2 uv;
    vec2 duv_dx;
    vec2 duv_dy;
    vec2 padding;
};
// StackPointResult in stack_sampling_test.cpp.
struct StackPointResult {
    vec4 stack_trilinear[VT_MAX_STACK_LAYERS];
    vec4 layer_trilinear[VT_MAX_STACK_LAYERS];
    vec4 stack_aniso[VT_MAX_STACK_LAYERS];
    vec4 layer_aniso[VT_MAX_STACK_LAYERS];
    uvec2 stack_feedback;
    uvec2 layer_feedback;  // the first layer's
    uint stack_resident_mip;
    uint layer_resident_mip;  // the coarsest of the layers'
    uint stack_aniso_resident_mip;
    uint layer_aniso_resident_mip;
};

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Points {
    StackPoint points[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Results {
    StackPointResult results[];
};

// StackSamplingPush in stack_sampling_test.cpp.
layout(push_constant, std430) uniform Push {
    uint64_t indirection;
    uint64_t directory;
    uint64_t points;
    uint64_t results;
    uint count;
    uint stack_id;
    uint layer_ids[VT_MAX_STACK_LAYERS];
}
push;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= push.count) return;
    const StackPoint p = Points(push.points).points[i];
    VtTexture stack = vt_texture(push.directory, push.indirection, push.stack_id);
    StackPointResult r;
    VtSampleInfo info;
    const VtStackSample trilinear =
        vt_stack_sample_lod_info(stack, p.uv, vt_clamped_lod(stack, p.duv_dx, p.duv_dy, 0.0), info);
    r.stack_resident_mip = info.resident_mip;
    const VtStackSample aniso =
        vt_stack_sample_grad_aniso_info(stack, p.uv, p.duv_dx, p.duv_dy, 0.0, 16.0, info);
    r.stack_aniso_resident_mip = info.resident_mip;
    r.stack_feedback = vt_feedback_aniso(stack, p.uv, p.duv_dx, p.duv_dy, 0.0, 16.0);
    r.layer_resident_mip = 0u;
    r.layer_aniso_resident_mip = 0u;
    for (uint l = 0u; l < VT_MAX_STACK_LAYERS; ++l) {
        r.stack_trilinear[l] = trilinear.layer[l];
        r.stack_aniso[l] = aniso.layer[l];
        r.layer_trilinear[l] = vec4(0.0);
        r.layer_aniso[l] = vec4(0.0);
        if (l >= stack.layer_count) continue;
        VtTexture t = vt_texture(push.directory, push.indirection, push.layer_ids[l]);
        r.layer_trilinear[l] = vt_sample_grad_info(t, p.uv, p.duv_dx, p.duv_dy, 0.0, info);
        r.layer_resident_mip = max(r.layer_resident_mip, info.resident_mip);
        r.layer_aniso[l] = vt_sample_grad_aniso_info(t, p.uv, p.duv_dx, p.duv_dy, 0.0, 16.0, info);
        r.layer_aniso_resident_mip = max(r.layer_aniso_resident_mip, info.resident_mip);
        if (l == 0u) r.layer_feedback = vt_feedback_aniso(t, p.uv, p.duv_dx, p.duv_dy, 0.0, 16.0);
    }
    Results(push.results).results[i] = r;
}
