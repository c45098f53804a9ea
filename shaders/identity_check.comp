#version 460
// The identity check: for every pixel of the plane, at the positions the deferred pass recorded
// (ground_plane_sample_position.frag), each of the two levels a trilinear sample blends is
// resolved as sampling resolves it (the wanted level, or the finest coarser one resident), and
// the nearest texel of that level is read, unfiltered, from the tile the frame's indirection
// table points at. On the identity texture (identity_pattern.glsl) that word must be the hash of
// the (texture, mip, tile, texel) the pixel's coordinates map to at the resolved level; a word of
// any other page -- one refilled under the frame -- is a violation. Counted per work group, then
// added to the frame's counts.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/identity_pattern.glsl"
#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer SamplePositions {
    vec4 positions[];  // (u, v, level of detail, texture id + 1; 0 on the sky), row by row
};
// IdentityCheckCounts in demos/viewer/renderer/vulkan_identity_check_pipeline.hpp.
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Counts {
    uint pixels;      // pixels of the plane checked
    uint violations;  // ... of which read a word that is not their own
    uint coarser;     // ... of which read a coarser level than they wanted
    uint unused;
};

// IdentityCheckPushConstants in demos/viewer/renderer/vulkan_identity_check_pipeline.hpp.
layout(push_constant, std430) uniform Check {
    uint64_t indirection;  // VulkanIndirectionTable::device_address()
    uint64_t directory;    // VulkanTextureDirectory::device_address()
    uint64_t positions;    // SamplePositions
    uint64_t counts;       // Counts
    uint width;
    uint height;
    uint identity_tag;  // the identity texture's tag (IdentitySettings::texture)
    uint padding;
} check;

shared uint group_pixels;
shared uint group_violations;
shared uint group_coarser;

// The page of the source's own layout (no tile levels) that holds a tile, relative to the
// texture, and the tile's slot in it: the identity words are those of the source's pages, which
// a texture streamed by tile (VtTexture::tile_levels) numbers differently.
uint source_page(VtTexture t, uint mip, uvec2 tile, out uint tile_in_page) {
    if (t.tile_levels == 0u) return vt_tile_page(t, mip, tile, tile_in_page) - t.base_page;
    const uvec2 per_page = uvec2(1u) << t.page_tiles_log2;
    uint first = 0u;
    for (uint m = 0u; m < mip && m < t.tail_first_mip; ++m) {
        const uvec2 tiles = (max(t.size >> m, uvec2(1u)) + t.tile_payload - 1u) / t.tile_payload;
        const uvec2 pages = (tiles + per_page - 1u) / per_page;
        first += pages.x * pages.y;
    }
    if (mip >= t.tail_first_mip) {
        tile_in_page = mip - t.tail_first_mip;
        return first;
    }
    const uvec2 tiles = (max(t.size >> mip, uvec2(1u)) + t.tile_payload - 1u) / t.tile_payload;
    const uint pages_x = (tiles.x + per_page.x - 1u) / per_page.x;
    const uvec2 page_xy = tile >> t.page_tiles_log2;
    const uvec2 in_page = tile & (per_page - 1u);
    tile_in_page = in_page.y * per_page.x + in_page.x;
    return first + page_xy.y * pages_x + page_xy.x;
}

// Whether the nearest texel of `wanted`, or of the coarser level sampling falls back to, holds
// its own identity. `coarser` says whether it fell back.
bool level_holds_identity(VtTexture t, uint wanted, vec2 uv, out bool coarser) {
    const VtResolved found = vt_resolve(t, wanted, uv);
    coarser = found.mip != wanted;
    // RGBA8 words only; not even the tail resident is a violation too.
    if (found.tile_address == 0ul || t.format != VT_FORMAT_RGBA8) return false;
    const uvec2 texel = uvec2(floor(found.position.c));
    const uvec2 local = texel - found.position.tile * t.tile_payload + t.tile_border;
    uint tile_in_page;
    const uint page = source_page(t, found.mip, found.position.tile, tile_in_page);
    const uint in_tile = local.y * t.tile_size + local.x;
    const uint word = tile_in_page * (t.tile_bytes / 4u) + in_tile;
    const uint read = VtTileWords(found.tile_address).words[in_tile];
    return read == vt_identity_texel_word(check.identity_tag, page, word);
}

void check_pixel(uvec2 pixel) {
    if (pixel.x >= check.width || pixel.y >= check.height) return;
    const vec4 position = SamplePositions(check.positions).positions[pixel.y * check.width + pixel.x];
    if (position.w == 0.0) return;
    VtTexture t = vt_texture(check.directory, check.indirection, uint(position.w) - 1u);
    const uint fine = uint(floor(position.z));
    bool fine_coarser = false, next_coarser = false;
    bool holds = level_holds_identity(t, fine, position.xy, fine_coarser);
    if (fine + 1u < t.mip_count) {
        holds = level_holds_identity(t, fine + 1u, position.xy, next_coarser) && holds;
    }
    atomicAdd(group_pixels, 1u);
    if (!holds) atomicAdd(group_violations, 1u);
    if (fine_coarser || next_coarser) atomicAdd(group_coarser, 1u);
}

void main() {
    if (gl_LocalInvocationIndex == 0u) {
        group_pixels = 0u;
        group_violations = 0u;
        group_coarser = 0u;
    }
    barrier();
    check_pixel(gl_GlobalInvocationID.xy);
    barrier();
    if (gl_LocalInvocationIndex != 0u) return;
    Counts counts = Counts(check.counts);
    if (group_pixels != 0u) atomicAdd(counts.pixels, group_pixels);
    if (group_violations != 0u) atomicAdd(counts.violations, group_violations);
    if (group_coarser != 0u) atomicAdd(counts.coarser, group_coarser);
}
