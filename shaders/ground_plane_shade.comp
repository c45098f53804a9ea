#version 460
// The deferred textured pass: samples the virtual texture at the positions the raster pass
// recorded (ground_plane_sample_position.frag) and writes RGBA8 colours, the sky where the plane
// is not. A compute pass runs on every core of GPUs that shade fragments on a few of them only
// (the H100), where sampling, and decoding block-compressed tiles most of all, costs
// arithmetic that the raster pass would run short of.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SamplePositions {
    vec4 positions[];  // (u, v, level of detail, 1 on the plane and 0 on the sky), row by row
};
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Colours {
    uint rgba8[];  // row by row
};

// ShadePushConstants in demos/viewer/renderer/vulkan_shade_pipeline.hpp.
layout(push_constant, std430) uniform Shade {
    uint64_t indirection;  // VulkanIndirectionTable::device_address()
    uint64_t directory;    // VulkanTextureDirectory::device_address()
    uint64_t positions;    // SamplePositions
    uint64_t colours;      // Colours
    uint width;
    uint height;
    uint texture_id;
    uint sky;  // the clear colour, RGBA8 with R in the low byte
} shade;

void main() {
    const uvec2 pixel = gl_GlobalInvocationID.xy;
    if (pixel.x >= shade.width || pixel.y >= shade.height) return;
    const uint i = pixel.y * shade.width + pixel.x;
    const vec4 position = SamplePositions(shade.positions).positions[i];
    uint colour = shade.sky;
    if (position.w != 0.0) {
        VtTexture t = vt_texture(shade.directory, shade.indirection, shade.texture_id);
        colour = packUnorm4x8(vt_sample_lod(t, position.xy, position.z));
    }
    Colours(shade.colours).rgba8[i] = colour;
}
