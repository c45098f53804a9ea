#version 460
// Addresses a list of (texture, level, uv) samples with shaders/vtpage/virtual_texture.glsl's
// own functions, as vt_sample does, and writes what each one found: the continuous position,
// the tile, the global page and the tile's slot in it, the bilinear footprint's top-left texel
// in the tile, and uv wrapped by the texture's address modes. shader_layout_grid_test.cpp
// compares them with TextureLayout and vt::wrap_uv.
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/virtual_texture.glsl"

layout(local_size_x = 64) in;

// GridSample in shader_layout_grid_test.cpp.
struct GridSample {
    vec2 uv;
    uint texture;
    uint mip;
};
// SampleAddress in shader_layout_grid_test.cpp.
struct SampleAddress {
    vec2 c;
    uvec2 tile;
    uint page;
    uint tile_in_page;
    uvec2 local;
    vec2 wrapped;
};

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Samples {
    GridSample samples[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Addresses {
    SampleAddress addresses[];
};

// LayoutGridPush in shader_layout_grid_test.cpp.
layout(push_constant, std430) uniform Grid {
    uint64_t directory;  // VulkanTextureDirectory::device_address()
    uint64_t samples;
    uint64_t addresses;
    uint sample_count;
}
grid;

void main() {
    const uint i = gl_GlobalInvocationID.x;
    if (i >= grid.sample_count) return;
    const GridSample s = Samples(grid.samples).samples[i];
    // Addressing never reads the indirection table: page and slot are the layout's alone.
    VtTexture t = vt_texture(grid.directory, 0ul, s.texture);
    const VtLevelPosition position = vt_level_position(t, s.mip, s.uv);
    SampleAddress found;
    found.c = position.c;
    found.tile = position.tile;
    found.page = vt_tile_page(t, s.mip, position.tile, found.tile_in_page);
    found.local = vt_bilinear_footprint(position, t.tile_payload, t.tile_border).local;
    found.wrapped = vt_wrap(s.uv, t.address);
    Addresses(grid.addresses).addresses[i] = found;
}
