#version 460
// The level-of-detail probe against the device (lod_probe_test.cpp): for each pair of uv
// derivatives, the level an image of the texture's size reads (`truth`, a VulkanLodProbe made at
// that size: level + trilinear fraction), the level virtual_texture.glsl takes from the probe
// (vt_device_lod), and the exact formula's (vt_formula_lod), the last two clamped as the
// device clamps to the image's levels.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(set = 0, binding = 0) uniform sampler2D probe;
layout(set = 1, binding = 0) uniform sampler2D truth;
#define VT_LOD_PROBE probe
#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 64) in;

struct Derivatives {
    vec2 dx;
    vec2 dy;
};
struct Levels {
    float device;
    float probe;
    float formula;
    float padding;
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Cases {
    Derivatives cases[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Results {
    Levels levels[];
};

layout(push_constant, std430) uniform Push {
    uint64_t cases;
    uint64_t results;
    uint count;
    uint width;
    uint height;
    uint levels;
}
push;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= push.count) return;
    const Derivatives d = Cases(push.cases).cases[i];
    const uvec2 size = uvec2(push.width, push.height);
    const float last = float(push.levels - 1u);
    Levels result;
    result.device = textureGrad(truth, vec2(0.5), d.dx, d.dy).r;
    result.probe = clamp(vt_device_lod(size, d.dx, d.dy), 0.0, last);
    result.formula = clamp(vt_formula_lod(size, d.dx, d.dy), 0.0, last);
    result.padding = 0.0;
    Results(push.results).levels[i] = result;
}
