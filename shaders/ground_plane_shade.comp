#version 460
// The deferred textured pass: samples the virtual texture at the positions the raster pass
// recorded (ground_plane_sample_position.frag) and writes RGBA8 colours, the sky where no plane
// is. Each pixel samples the texture its position names (a scene's planes have one each). A compute pass runs on every core of GPUs that shade fragments on a few of them only
// (the H100), where sampling, and decoding block-compressed tiles most of all, costs
// arithmetic that the raster pass would run short of.
//
// It also counts how closely the frame got the detail it wanted (SampleQuality): pixels on the
// plane, those sampled at the level they wanted, and the levels they fell back by. Each subgroup
// sums its pixels and one lane adds the sums to one of a few bins, so that a frame costs a few
// atomics per subgroup spread over many addresses; the host adds the bins up.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_basic : require

#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SamplePositions {
    vec4 positions[];  // (u, v, level of detail, texture id + 1; 0 on the sky), row by row
};
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Colours {
    uint rgba8[];  // row by row
};
// Bins of (plane pixels, pixels at the wanted level, levels missing, unused), summed on the host.
layout(buffer_reference, std430, buffer_reference_align = 16) buffer QualityBins {
    uvec4 bins[];
};

// ShadePushConstants in demos/viewer/renderer/vulkan_shade_pipeline.hpp.
layout(push_constant, std430) uniform Shade {
    uint64_t indirection;  // VulkanIndirectionTable::device_address()
    uint64_t directory;    // VulkanTextureDirectory::device_address()
    uint64_t positions;    // SamplePositions
    uint64_t colours;      // Colours
    uint64_t quality;      // QualityBins, zeroed before the pass
    uint width;
    uint height;
    uint sky;  // the clear colour, RGBA8 with R in the low byte
    uint quality_bins;  // a power of two
    float lod_bias;     // added to each pixel's level of detail; the quality measure ignores it
    // 1: trilinear at the recorded level; more: anisotropic, up to this many probes, the
    // derivatives taken from the neighbouring pixels' positions.
    float max_anisotropy;
} shade;

// Whether pixel p is in the image and on the plane of texture id + 1 = w.
bool on_plane(ivec2 p, float w) {
    if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, ivec2(shade.width, shade.height)))) {
        return false;
    }
    return SamplePositions(shade.positions).positions[p.y * int(shade.width) + p.x].w == w;
}

vec2 uv_at(ivec2 p) {
    return SamplePositions(shade.positions).positions[p.y * int(shade.width) + p.x].xy;
}

// uv's change from one pixel to the next along `axis`, as a fragment shader's fine derivative
// takes it within its 2 x 2 quad: to the next pixel from an even one, from the previous pixel
// to an odd one; the other neighbour where that one is not on the same plane; false where
// neither is (a plane one pixel wide there).
bool pixel_derivative(ivec2 pixel, ivec2 axis, vec4 position, out vec2 d) {
    d = vec2(0.0);
    const bool even = ((axis.x != 0 ? pixel.x : pixel.y) & 1) == 0;
    const ivec2 first = even ? axis : -axis;
    for (int i = 0; i < 2; ++i) {
        const ivec2 step = i == 0 ? first : -first;
        if (on_plane(pixel + step, position.w)) {
            const vec2 change = uv_at(pixel + step) - position.xy;
            d = step == axis ? change : -change;
            return true;
        }
    }
    return false;
}

// A pixel's sample, and the level it wanted (unbiased). Anisotropic where asked for and the
// footprint is elongated; otherwise trilinear at the level the raster pass recorded.
vec4 shade_sample(VtTexture t, ivec2 pixel, vec4 position, out uint wanted,
                  out VtSampleInfo info) {
    vec2 dx, dy;
    if (shade.max_anisotropy > 1.0 && pixel_derivative(pixel, ivec2(1, 0), position, dx) &&
        pixel_derivative(pixel, ivec2(0, 1), position, dy)) {
        VtAnisotropicFootprint footprint =
            vt_anisotropic_footprint(t, dx, dy, 0.0, shade.max_anisotropy);
        if (footprint.probes > 1u) {
            wanted = uint(floor(footprint.lod));
            footprint.lod = clamp(footprint.lod + shade.lod_bias, 0.0, float(t.mip_count - 1u));
            return vt_sample_footprint_info(t, position.xy, footprint, info);
        }
    }
    // The positions hold the unbiased level: a pixel at its wanted level is one sampled at that
    // level, so a bias shows as levels missing.
    wanted = uint(floor(position.z));
    const float lod = clamp(position.z + shade.lod_bias, 0.0, float(t.mip_count - 1u));
    return vt_sample_lod_info(t, position.xy, lod, info);
}

// (on the plane, at the wanted level, levels missing) of one pixel, summed over the subgroup.
void count_quality(uvec3 pixel_counts) {
    const uvec3 sums = subgroupAdd(pixel_counts);
    if (!subgroupElect() || sums.x == 0u) return;
    const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint bin = (group * gl_NumSubgroups + gl_SubgroupID) & (shade.quality_bins - 1u);
    QualityBins bins = QualityBins(shade.quality);
    atomicAdd(bins.bins[bin].x, sums.x);
    atomicAdd(bins.bins[bin].y, sums.y);
    if (sums.z != 0u) atomicAdd(bins.bins[bin].z, sums.z);
}

void main() {
    const uvec2 pixel = gl_GlobalInvocationID.xy;
    if (pixel.x >= shade.width || pixel.y >= shade.height) return;
    const uint i = pixel.y * shade.width + pixel.x;
    const vec4 position = SamplePositions(shade.positions).positions[i];
    uint colour = shade.sky;
    uvec3 counts = uvec3(0u);
    if (position.w != 0.0) {
        const uint texture_id = uint(position.w) - 1u;
        VtTexture t = vt_texture(shade.directory, shade.indirection, texture_id);
        VtSampleInfo info;
        uint wanted;
        const vec4 sampled = shade_sample(t, ivec2(pixel), position, wanted, info);
        colour = packUnorm4x8(vt_output_colour(t, sampled));
        const uint missing = info.resident_mip - wanted;
        counts = uvec3(1u, missing == 0u ? 1u : 0u, missing);
    }
    Colours(shade.colours).rgba8[i] = colour;
    count_quality(counts);
}
