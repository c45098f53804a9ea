// Sampling a vtpage virtual texture from GLSL (Vulkan 1.3, shaderInt64). An embedding app
// includes this file (glslc -I <vtpage shaders> -I <vtpage generated shaders>) and passes two
// 64-bit device addresses to its shaders, e.g. as push constants:
//   VulkanIndirectionTable::device_address()  the physical page behind each virtual page
//   VulkanTextureDirectory::device_address()  each texture's layout (VtTextureInfo)
//
//   VtTexture t = vt_texture(directory_address, indirection_address, texture_id);
//   vec4 colour = vt_sample(t, uv);   // fragment shaders that #define VT_FRAGMENT_SHADER first
//   vec4 colour = vt_sample_grad(t, uv, dx, dy, 0.0);   // anywhere
//   vec4 colour = vt_sample_lod(t, uv, vt_clamped_lod(t, dx, dy, 0.0));   // lod worked out before
//   uvec2 request = vt_feedback(t, uv, dFdx(uv), dFdy(uv), lod_bias);  // a FeedbackEntry
//   out_colour = vt_output_colour(t, colour);   // for an 8-bit UNORM target (see there)
// A material stack (a texture whose pages hold several layers, StackSource) samples them all at
// once, one lookup per probe:
//   VtStackSample s = vt_stack_sample_grad_aniso(t, uv, dx, dy, 0.0, 16.0);  // s.layer[0..3]
// Anisotropic, up to 16 probes (the feedback pass passes the same max_anisotropy):
//   vec4 colour = vt_sample_grad_aniso(t, uv, dx, dy, 0.0, 16.0);   // vt_sample_aniso(t, uv, 16.0)
//   uvec2 request = vt_feedback_aniso(t, uv, dFdx(uv), dFdy(uv), lod_bias, 16.0);
//
// The level of detail is the specification's exact formula, or the device's own where the app
// binds a VulkanLodProbe and #defines VT_LOD_PROBE first (see vt_device_lod):
//   layout(set = 0, binding = 0) uniform sampler2D lod_probe;
//   #define VT_LOD_PROBE lod_probe
//
// Sampling is trilinear: bilinear inside one tile of each of the two nearest mip levels (the
// tile's 4-texel border holds its neighbours' texels, so the 2 x 2 footprint never leaves the
// tile), blended by the fractional level of detail. A level whose page is not resident falls
// back to the finest coarser level that is; the packed mip tail must always be resident
// (magenta shows where it is not).
//
// Anisotropic sampling (vt_anisotropic_footprint) averages N trilinear probes along the
// footprint's major axis at the level of its minor axis, N following the footprint's elongation
// up to max_anisotropy: N times the trilinear cost where the surface is seen at a grazing angle,
// the trilinear sample itself (N = 1, a few more instructions) where the footprint is round. Its
// feedback asks for the finer level the probes read.
//
// Addressing follows the texture's address modes (TileSource::sampling()), per axis, as Vulkan
// samplers do: clamp to edge, repeat or mirrored repeat. uv is wrapped into the texture before
// any level's texel position is found (vt_wrap), so a uv of 37.25 samples, falls back and asks
// for the pages that 0.25 needs; the level of detail comes from the unwrapped uv's derivatives.
// At a repeating or mirrored edge the bilinear footprint reads the edge tile's border, which
// holds the texels beyond the edge as the mode wraps them.
//
// Colour: texels of an sRGB texture are decoded to linear (the exact piecewise transfer
// function, alpha untouched) before they are filtered, as *_SRGB formats are: vt_sample* return
// linear values. vt_output_colour encodes them back for a UNORM target.
#ifndef VTPAGE_VIRTUAL_TEXTURE_GLSL
#define VTPAGE_VIRTUAL_TEXTURE_GLSL

#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "vtpage/block_decode.glsl"
#include "vtpage/layout.glsl"

struct VtTextureInfo {
    uint base_page;  // global page index of the texture's first page
    uint width;      // texels of mip 0
    uint height;
    uint mip_count;
    uint tail_first_mip;
    uint format;  // VT_FORMAT_*
    uint tile_size;
    uint tile_border;
    uint tile_payload;
    uint tile_bytes;
    uint page_tiles_x;
    uint page_tiles_y;
    uint address_u;    // VT_ADDRESS_*
    uint address_v;
    uint color_space;  // VT_COLOR_SPACE_*
    uint layer_count;    // 1, or a material stack's layers
    uint record_bytes;   // bytes of one block's record: every layer's block (one texel in RGBA8)
    uint layer_formats;  // VT_FORMAT_* of layer l in bits [8l, 8l + 8)
    uint layer_offsets;  // where layer l's block starts in a record, bits [8l, 8l + 8)
    uint srgb_layers;    // bit l: layer l is decoded from sRGB
    uint tile_levels;    // levels [0, tile_levels) hold a tile a page
    uint mip_first_page[VT_MAX_MIPS];  // relative to base_page
    uint mip_pages_x[VT_MAX_MIPS];
};

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer VtTextureDirectory {
    VtTextureInfo textures[];
};
// One 64-bit device address per virtual page; 0 where the page is not resident.
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer VtIndirection {
    uint64_t page_address[];
};
// The texels of an RGBA8 tile, row by row, border included.
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer VtTileWords {
    uint words[];
};
// The 4 x 4 blocks of a block-compressed tile, row by row, border included: 8 bytes a block in
// BC1 and BC4, 16 in BC3 and BC5, each read with one load (tiles start at multiples of their
// 32 or 64 KiB in a 2 MiB page, so every block is aligned).
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer VtTileBlocks8 {
    uvec2 blocks[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer VtTileBlocks16 {
    uvec4 blocks[];
};

// A texture as a sample sees it: its directory entry's fixed fields read once (every sample
// needs them), the per-level tables left in the directory.
struct VtTexture {
    VtTextureDirectory directory;
    VtIndirection indirection;
    uint id;
    uint base_page;
    uvec2 size;  // texels of mip 0
    uint mip_count;
    uint tail_first_mip;
    uint format;
    uint tile_size;
    uint tile_border;
    uint tile_payload;  // 120 or 248: vt_div_payload divides by constants
    uint tile_bytes;
    uvec2 page_tiles_log2;  // tiles per page are powers of two: shifts and masks
    uvec2 address;          // VT_ADDRESS_* of u and v
    uint color_space;       // VT_COLOR_SPACE_*
    uint layer_count;       // 1, or a material stack's layers (vt_stack_sample*)
    uint record_bytes;
    uint layer_formats;
    uint layer_offsets;
    uint srgb_layers;
    uint tile_levels;  // levels [0, tile_levels) hold a tile a page
};

VtTexture vt_texture(uint64_t directory, uint64_t indirection, uint id) {
    VtTexture t;
    t.directory = VtTextureDirectory(directory);
    t.indirection = VtIndirection(indirection);
    t.id = id;
    t.base_page = t.directory.textures[id].base_page;
    t.size = uvec2(t.directory.textures[id].width, t.directory.textures[id].height);
    t.mip_count = t.directory.textures[id].mip_count;
    t.tail_first_mip = t.directory.textures[id].tail_first_mip;
    t.format = t.directory.textures[id].format;
    t.tile_size = t.directory.textures[id].tile_size;
    t.tile_border = t.directory.textures[id].tile_border;
    t.tile_payload = t.directory.textures[id].tile_payload;
    t.tile_bytes = t.directory.textures[id].tile_bytes;
    t.page_tiles_log2 = uvec2(findLSB(t.directory.textures[id].page_tiles_x),
                              findLSB(t.directory.textures[id].page_tiles_y));
    t.address = uvec2(t.directory.textures[id].address_u, t.directory.textures[id].address_v);
    t.color_space = t.directory.textures[id].color_space;
    t.layer_count = t.directory.textures[id].layer_count;
    t.record_bytes = t.directory.textures[id].record_bytes;
    t.layer_formats = t.directory.textures[id].layer_formats;
    t.layer_offsets = t.directory.textures[id].layer_offsets;
    t.srgb_layers = t.directory.textures[id].srgb_layers;
    t.tile_levels = t.directory.textures[id].tile_levels;
    return t;
}

// v / payload for the two payloads there are (RGBA8's 120, the BC formats' 248): a division by a
// constant is a multiply and a shift, a division by a variable a long sequence.
uvec2 vt_div_payload(uvec2 v, uint payload) {
    return payload == 120u ? v / 120u : v / 248u;
}

// Where one mip level is sampled: the continuous texel position c (clamped to the texel centres
// at a clamped edge, in [0, level] at a wrapped one) and the tile that holds it.
struct VtLevelPosition {
    vec2 c;
    uvec2 tile;
};


// Texels of a mip level: Vulkan's chain, each side max(1, side >> mip).
vec2 vt_level_size(uvec2 size, uint mip) { return vec2(max(size >> mip, uvec2(1u))); }

// u (or v) wrapped into the texture by an axis's address mode: repeat keeps u - floor(u) (1
// only where the subtraction rounds up), mirrored repeat folds every other period back, clamp
// leaves u alone. vt::wrap_uv (texture_sampling.hpp) is the same arithmetic on the CPU.
float vt_wrap(float u, uint mode) {
    if (mode == VT_ADDRESS_REPEAT) return u - floor(u);
    if (mode == VT_ADDRESS_MIRRORED_REPEAT) {
        const float folded = u - 2.0 * floor(u * 0.5);  // in [0, 2]
        return folded > 1.0 ? 2.0 - folded : folded;
    }
    return u;
}

vec2 vt_wrap(vec2 uv, uvec2 address) {
    return vec2(vt_wrap(uv.x, address.x), vt_wrap(uv.y, address.y));
}

// One axis of the continuous position: a clamped edge keeps the footprint on the level's edge
// texels; a wrapped one lets it reach half a texel past the edge, into the edge tile's border.
// The clamp of a wrapped position changes no finite uv: it keeps a NaN or infinite one (whose
// wrap is NaN) in the level, as the clamped mode does.
float vt_axis_position(float u, float level, uint mode) {
    if (mode == VT_ADDRESS_CLAMP_TO_EDGE) return clamp(u * level, 0.5, level - 0.5);
    return clamp(vt_wrap(u, mode) * level, 0.0, level);
}

VtLevelPosition vt_level_position(uvec2 size, uint payload, uvec2 address, uint mip, vec2 uv) {
    const vec2 level = vt_level_size(size, mip);
    VtLevelPosition position;
    position.c = vec2(vt_axis_position(uv.x, level.x, address.x),
                      vt_axis_position(uv.y, level.y, address.y));
    // c = level (a wrapped edge) belongs to the last tile, whose border holds what lies beyond.
    position.tile = vt_div_payload(uvec2(min(floor(position.c), level - 1.0)), payload);
    return position;
}

VtLevelPosition vt_level_position(VtTexture t, uint mip, vec2 uv) {
    return vt_level_position(t.size, t.tile_payload, t.address, mip, uv);
}

// The level of detail for uv derivatives (in uv units per pixel), before clamping, by the exact
// formula of the Vulkan specification (the longer derivative, in texels).
float vt_formula_lod(uvec2 size, vec2 duv_dx, vec2 duv_dy) {
    const vec2 dx = duv_dx * vec2(size);
    const vec2 dy = duv_dy * vec2(size);
    const float rho2 = max(max(dot(dx, dx), dot(dy, dy)), 1e-20);
    return 0.5 * log2(rho2);
}

// The device's own level of detail, read from a VulkanLodProbe: an app that declares its probe
//   layout(set = S, binding = B) uniform sampler2D my_probe;
//   #define VT_LOD_PROBE my_probe
//   #define VT_LOD_PROBE_ENABLED my_switch   // optional: a bool, a specialization constant say
// before it includes this file has every isotropic level of detail (vt_lod: the trilinear
// sample, its feedback and the single probe of a round footprint) taken from the device, its
// approximation of the footprint and its rounding of the fraction included, as an ordinary
// image of the texture's size would be sampled in the same place. Devices do not all evaluate
// the formula exactly, and where two levels differ (an edge minified) a level of detail off by
// a few hundredths shows. The probe's levels hold their own index: sampled trilinearly at the
// derivatives scaled to the texture's size it returns level + fraction. The scale also takes a
// power of two that the formula picks, so that the answer lies among the probe's middle levels
// whatever the texture's size (a power of two moves the device's level by exactly one).
#ifdef VT_LOD_PROBE
#ifndef VT_LOD_PROBE_ENABLED
#define VT_LOD_PROBE_ENABLED true
#endif
const float vt_lod_probe_levels = 6.0;  // VulkanLodProbe::probe_levels

float vt_device_lod(uvec2 size, vec2 duv_dx, vec2 duv_dy) {
    const float estimate = clamp(vt_formula_lod(size, duv_dx, duv_dy), -64.0, 64.0);
    const float shift = floor(estimate) - 2.0;
    const vec2 scale = vec2(size) * exp2(-shift - (vt_lod_probe_levels - 1.0));
    return textureGrad(VT_LOD_PROBE, vec2(0.5), duv_dx * scale, duv_dy * scale).r + shift;
}
#endif

// The level of detail for uv derivatives (in uv units per pixel), before clamping: the device's
// where the app gave a probe (above), otherwise the formula's.
float vt_lod(uvec2 size, vec2 duv_dx, vec2 duv_dy, float lod_bias) {
#ifdef VT_LOD_PROBE
    if (VT_LOD_PROBE_ENABLED) return vt_device_lod(size, duv_dx, duv_dy) + lod_bias;
#endif
    return vt_formula_lod(size, duv_dx, duv_dy) + lod_bias;
}

float vt_clamped_lod(VtTexture t, vec2 duv_dx, vec2 duv_dy, float lod_bias) {
    return clamp(vt_lod(t.size, duv_dx, duv_dy, lod_bias), 0.0, float(t.mip_count - 1u));
}

// The global page and the tile's slot in it for a tile of a mip level.
uint vt_tile_page(VtTexture t, uint mip, uvec2 tile, out uint tile_in_page) {
    uint page = t.directory.textures[t.id].mip_first_page[mip];
    if (mip >= t.tail_first_mip) {
        tile_in_page = mip - t.tail_first_mip;
    } else {
        // A page of a tile level is one tile.
        const uvec2 shift = mip < t.tile_levels ? uvec2(0u) : t.page_tiles_log2;
        const uvec2 page_xy = tile >> shift;
        const uvec2 in_page = tile & ((uvec2(1u) << shift) - 1u);
        page += page_xy.y * t.directory.textures[t.id].mip_pages_x[mip] + page_xy.x;
        tile_in_page = (in_page.y << shift.x) + in_page.x;
    }
    return t.base_page + page;
}

// A resident level found for a wanted one.
struct VtResolved {
    uint mip;             // the level found: the wanted one, or a coarser one
    uint64_t tile_address;  // the tile's first byte; 0 when not even the tail is resident
    VtLevelPosition position;
};

// Whether the page holding a tile of a level is resident.
bool vt_level_resident(VtTexture t, uint mip, vec2 uv) {
    const VtLevelPosition position = vt_level_position(t, mip, uv);
    uint tile_in_page;
    return t.indirection.page_address[vt_tile_page(t, mip, position.tile, tile_in_page)] != 0ul;
}

VtResolved vt_resolve(VtTexture t, uint wanted_mip, vec2 uv) {
    const uint tail = t.tail_first_mip;
    // The tail page holds every level from `tail` on: no coarser page to try. Only the level
    // crosses iterations: llvmpipe (Mesa 22.3) loses 64-bit values carried through a loop that
    // the lanes of a SIMD group leave at different iterations.
    uint mip = wanted_mip;
    while (mip < tail && !vt_level_resident(t, mip, uv)) ++mip;
    VtResolved found;
    found.mip = mip;
    found.position = vt_level_position(t, mip, uv);
    uint tile_in_page;
    const uint64_t page_address =
        t.indirection.page_address[vt_tile_page(t, mip, found.position.tile, tile_in_page)];
    found.tile_address = page_address == 0ul
                             ? 0ul
                             : page_address + uint64_t(tile_in_page) * uint64_t(t.tile_bytes);
    return found;
}

// Texel p (border included) of a tile in any format. Block-compressed tiles are decoded here,
// from page memory: Vulkan images cannot sit on imported CUDA pages (see docs/gpu.md).
vec4 vt_tile_texel(uint64_t tile_address, uint format, uint tile_size, uvec2 p) {
    if (format == VT_FORMAT_RGBA8) {
        return unpackUnorm4x8(VtTileWords(tile_address).words[p.y * tile_size + p.x]);
    }
    const uint block = (p.y >> 2) * (tile_size >> 2) + (p.x >> 2);
    const uvec2 texel = p & 3u;
    if (format == VT_FORMAT_BC1 || format == VT_FORMAT_BC4) {
        const uvec2 words = VtTileBlocks8(tile_address).blocks[block];
        // BC1 is RGB: the 3-colour palette's transparent black is black here.
        if (format == VT_FORMAT_BC1) return vec4(vt_decode_bc1(words, texel).rgb, 1.0);
        return vt_decode_bc4(words, texel);
    }
    const uvec4 words = VtTileBlocks16(tile_address).blocks[block];
    return format == VT_FORMAT_BC3 ? vt_decode_bc3(words, texel) : vt_decode_bc5(words, texel);
}

// The 2 x 2 texels a bilinear sample at position.c reads: the top-left one as a texel of the
// tile that holds position.c (border included; the other three are +1 in x and y), and the
// weights of the right and lower ones.
struct VtFootprint {
    uvec2 local;
    vec2 weight;
};

VtFootprint vt_bilinear_footprint(VtLevelPosition position, uint payload, uint border) {
    const vec2 p = position.c - 0.5;
    const vec2 corner = floor(p);
    VtFootprint footprint;
    footprint.weight = p - corner;
    footprint.local = uvec2(ivec2(corner) - ivec2(position.tile * payload) + int(border));
    return footprint;
}

// The sRGB transfer function (IEC 61966-2-1, exactly piecewise) on the colour channels; alpha
// is linear in *_SRGB formats and stays as it is.
vec4 vt_srgb_to_linear(vec4 encoded) {
    const vec3 low = encoded.rgb / 12.92;
    const vec3 high = pow((encoded.rgb + 0.055) / 1.055, vec3(2.4));
    return vec4(mix(high, low, lessThanEqual(encoded.rgb, vec3(0.04045))), encoded.a);
}

vec4 vt_linear_to_srgb(vec4 linear) {
    const vec3 low = linear.rgb * 12.92;
    const vec3 high = 1.055 * pow(linear.rgb, vec3(1.0 / 2.4)) - 0.055;
    return vec4(mix(high, low, lessThanEqual(linear.rgb, vec3(0.0031308))), linear.a);
}

// Texel p of layer `layer` of a material stack's tile: the tile is 4 x 4 blocks of records, each
// record every layer's block one after the other (tile_stack.hpp). Records and offsets are
// multiples of 8 bytes: a 16-byte block is read as two 8-byte loads unless it is 16-aligned.
vec4 vt_stack_tile_texel(VtTexture t, uint64_t tile_address, uint layer, uvec2 p) {
    const uint format = (t.layer_formats >> (8u * layer)) & 0xFFu;
    const uint offset = (t.layer_offsets >> (8u * layer)) & 0xFFu;
    const uint block = (p.y >> 2) * (t.tile_size >> 2) + (p.x >> 2);
    const uint64_t address = tile_address + uint64_t(block) * uint64_t(t.record_bytes) + offset;
    const uvec2 texel = p & 3u;
    if (format == VT_FORMAT_BC1 || format == VT_FORMAT_BC4) {
        const uvec2 words = VtTileBlocks8(address).blocks[0];
        if (format == VT_FORMAT_BC1) return vec4(vt_decode_bc1(words, texel).rgb, 1.0);
        return vt_decode_bc4(words, texel);
    }
    uvec4 words;
    if (((t.record_bytes | offset) & 15u) == 0u) {
        words = VtTileBlocks16(address).blocks[0];
    } else {
        words = uvec4(VtTileBlocks8(address).blocks[0], VtTileBlocks8(address).blocks[1]);
    }
    return format == VT_FORMAT_BC3 ? vt_decode_bc3(words, texel) : vt_decode_bc5(words, texel);
}

// A texel of a layer as the filter sees it: decoded to linear first where the layer is sRGB.
// A plain texture is its one layer.
vec4 vt_filter_texel(VtTexture t, uint64_t tile_address, uint layer, uvec2 p) {
    const vec4 texel = t.layer_count == 1u
                           ? vt_tile_texel(tile_address, t.format, t.tile_size, p)
                           : vt_stack_tile_texel(t, tile_address, layer, p);
    return ((t.srgb_layers >> layer) & 1u) != 0u ? vt_srgb_to_linear(texel) : texel;
}

vec4 vt_filter_texel(VtTexture t, uint64_t tile_address, uvec2 p) {
    return vt_filter_texel(t, tile_address, 0u, p);
}

// Bilinear inside the tile that holds position.c, of one layer.
vec4 vt_bilinear(VtTexture t, uint64_t tile_address, VtFootprint footprint, uint layer) {
    const uvec2 local = footprint.local;
    const vec2 weight = footprint.weight;
    const vec4 t00 = vt_filter_texel(t, tile_address, layer, local);
    const vec4 t10 = vt_filter_texel(t, tile_address, layer, local + uvec2(1u, 0u));
    const vec4 t01 = vt_filter_texel(t, tile_address, layer, local + uvec2(0u, 1u));
    const vec4 t11 = vt_filter_texel(t, tile_address, layer, local + uvec2(1u, 1u));
    return mix(mix(t00, t10, weight.x), mix(t01, t11, weight.x), weight.y);
}

vec4 vt_bilinear(VtTexture t, uint64_t tile_address, VtLevelPosition position) {
    return vt_bilinear(t, tile_address,
                       vt_bilinear_footprint(position, t.tile_payload, t.tile_border), 0u);
}

const vec4 vt_missing_tail_colour = vec4(1.0, 0.0, 1.0, 1.0);

// Bilinear sample of one level, or of the finest resident coarser one.
vec4 vt_sample_level(VtTexture t, uint mip, vec2 uv, out uint resident_mip) {
    const VtResolved found = vt_resolve(t, mip, uv);
    resident_mip = found.mip;
    if (found.tile_address == 0ul) return vt_missing_tail_colour;
    return vt_bilinear(t, found.tile_address, found.position);
}

// What one trilinear sample wanted and what it got.
struct VtSampleInfo {
    float lod;          // clamped level of detail
    uint wanted_mip;    // floor(lod)
    uint resident_mip;  // the level the finer half of the sample came from
};

// A trilinear sample at a level of detail already clamped (vt_clamped_lod): for passes that
// sample where derivatives are not at hand, e.g. a compute pass shading what a raster pass
// recorded (uv and level of detail per pixel).
vec4 vt_sample_lod_info(VtTexture t, vec2 uv, float lod, out VtSampleInfo info) {
    const uint mip0 = uint(floor(lod));
    const float blend = lod - float(mip0);
    info.lod = lod;
    info.wanted_mip = mip0;
    const vec4 fine = vt_sample_level(t, mip0, uv, info.resident_mip);
    if (mip0 + 1u >= t.mip_count) return fine;
    uint coarse_mip;
    const vec4 coarse = vt_sample_level(t, mip0 + 1u, uv, coarse_mip);
    return mix(fine, coarse, blend);
}

vec4 vt_sample_lod(VtTexture t, vec2 uv, float lod) {
    VtSampleInfo info;
    return vt_sample_lod_info(t, uv, lod, info);
}

vec4 vt_sample_grad_info(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy, float lod_bias,
                         out VtSampleInfo info) {
    return vt_sample_lod_info(t, uv, vt_clamped_lod(t, duv_dx, duv_dy, lod_bias), info);
}

vec4 vt_sample_grad(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy, float lod_bias) {
    VtSampleInfo info;
    return vt_sample_grad_info(t, uv, duv_dx, duv_dy, lod_bias, info);
}

// Anisotropic filtering, EXT_texture_filter_anisotropic's model. The footprint's axes are the
// two derivative vectors in texels, Px and Py; Pmax = max(Px, Py), Pmin = min(Px, Py). N =
// min(ceil(Pmax / Pmin), max_anisotropy) trilinear probes lie along the major axis, spaced
// Pmax / N apart and centred on uv, each at the level of max(Pmin, Pmax / N): the minor axis's
// where N reaches the ratio, coarser where max_anisotropy caps it. Their mean is the sample.
// N = 1 is the isotropic sample itself (its level is Pmax's, vt_lod's).
struct VtAnisotropicFootprint {
    float lod;    // clamped level of detail every probe reads
    uint probes;  // N
    vec2 step;    // uv from one probe to the next, along the major axis
};

// A footprint less than this much longer than wide counts as round: one probe. A head-on view
// is round up to rounding, and a nearly round footprint gains too little from a second probe to
// pay for it.
const float vt_round_footprint = 1.125;

VtAnisotropicFootprint vt_anisotropic_footprint(uvec2 size, uint mip_count, vec2 duv_dx,
                                                vec2 duv_dy, float lod_bias,
                                                float max_anisotropy) {
    const float px = length(duv_dx * vec2(size));
    const float py = length(duv_dy * vec2(size));
    const float p_max = max(max(px, py), 1e-10);
    const float p_min = max(min(px, py), 1e-10);
    // No more probes than texels of level 0 along the major axis: closer ones read the same
    // texels again.
    const float ratio = min(min(p_max / p_min, max_anisotropy), max(ceil(p_max), 1.0));
    VtAnisotropicFootprint footprint;
    // Written so that a NaN ratio (non-finite derivatives) takes one probe and no ratio or
    // max_anisotropy takes more than 16: the loop's bound never comes from a bad input.
    footprint.probes = ratio > vt_round_footprint ? uint(ceil(min(ratio, 16.0))) : 1u;
    const float n = float(footprint.probes);
    const float lod = footprint.probes == 1u ? vt_lod(size, duv_dx, duv_dy, lod_bias)
                                             : log2(max(p_min, p_max / n)) + lod_bias;
    footprint.lod = clamp(lod, 0.0, float(mip_count - 1u));
    footprint.step = (px >= py ? duv_dx : duv_dy) / n;
    return footprint;
}

VtAnisotropicFootprint vt_anisotropic_footprint(VtTexture t, vec2 duv_dx, vec2 duv_dy,
                                                float lod_bias, float max_anisotropy) {
    return vt_anisotropic_footprint(t.size, t.mip_count, duv_dx, duv_dy, lod_bias,
                                    max_anisotropy);
}

// The probes of a footprint averaged, each a trilinear sample with its own wrapping, sRGB
// decoding and fallback; info.resident_mip is the coarsest level a probe's finer half came
// from, so that resident_mip == wanted_mip says the whole sample read the level it wanted.
vec4 vt_sample_footprint_info(VtTexture t, vec2 uv, VtAnisotropicFootprint footprint,
                              out VtSampleInfo info) {
    if (footprint.probes <= 1u) return vt_sample_lod_info(t, uv, footprint.lod, info);
    const float n = float(footprint.probes);
    vec4 sum = vec4(0.0);
    uint coarsest = 0u;
    for (uint i = 0u; i < footprint.probes; ++i) {
        VtSampleInfo probe;
        const vec2 at = uv + footprint.step * (float(i) + 0.5 - 0.5 * n);
        sum += vt_sample_lod_info(t, at, footprint.lod, probe);
        coarsest = max(coarsest, probe.resident_mip);
    }
    info.lod = footprint.lod;
    info.wanted_mip = uint(floor(footprint.lod));
    info.resident_mip = coarsest;
    return sum / n;
}

// An anisotropic sample of up to max_anisotropy probes (1 to 16, as samplers allow; 1 or less
// is vt_sample_grad_info, more than 16 is 16).
vec4 vt_sample_grad_aniso_info(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy, float lod_bias,
                               float max_anisotropy, out VtSampleInfo info) {
    return vt_sample_footprint_info(
        t, uv, vt_anisotropic_footprint(t, duv_dx, duv_dy, lod_bias, max_anisotropy), info);
}

vec4 vt_sample_grad_aniso(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy, float lod_bias,
                          float max_anisotropy) {
    VtSampleInfo info;
    return vt_sample_grad_aniso_info(t, uv, duv_dx, duv_dy, lod_bias, max_anisotropy, info);
}

// A FeedbackEntry for a level's tile at uv.
uvec2 vt_feedback_entry(VtTexture t, uint mip, vec2 uv) {
    const VtLevelPosition position = vt_level_position(t, mip, uv);
    return uvec2((t.id & VT_FEEDBACK_TEXTURE_MASK) << VT_FEEDBACK_TEXTURE_SHIFT |
                     (mip & VT_FEEDBACK_MIP_MASK) << VT_FEEDBACK_MIP_SHIFT,
                 (position.tile.x & VT_FEEDBACK_TILE_X_MASK) << VT_FEEDBACK_TILE_X_SHIFT |
                     (position.tile.y & VT_FEEDBACK_TILE_Y_MASK) << VT_FEEDBACK_TILE_Y_SHIFT);
}

// The tile a pixel wants, packed as a FeedbackEntry (texture_mip, tile_xy): the finer of the
// two levels a trilinear sample blends. lod_bias = -log2(feedback downscale) when the feedback
// pass runs at a reduced resolution, so that it asks for what the full-resolution pass samples.
uvec2 vt_feedback(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy, float lod_bias) {
    return vt_feedback_entry(t, uint(floor(vt_clamped_lod(t, duv_dx, duv_dy, lod_bias))), uv);
}

// What an anisotropic sample (vt_sample_grad_aniso, the same max_anisotropy) wants: the finer
// level its probes blend, at uv's tile (the probes' own tiles are asked for by the pixels they
// lie under).
uvec2 vt_feedback_aniso(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy, float lod_bias,
                        float max_anisotropy) {
    const VtAnisotropicFootprint footprint =
        vt_anisotropic_footprint(t, duv_dx, duv_dy, lod_bias, max_anisotropy);
    return vt_feedback_entry(t, uint(floor(footprint.lod)), uv);
}

// What a shader writes to an 8-bit UNORM target whose values are shown as stored (the viewer's
// and the embedding example's): an sRGB texture's linear sample encoded back to sRGB, a linear
// texture's as sampled, bit for bit. Shading that mixes textures should work on vt_sample's
// linear values and encode once (or write to an *_SRGB target and skip this).
vec4 vt_output_colour(VtTexture t, vec4 sampled) {
    return t.color_space == VT_COLOR_SPACE_SRGB ? vt_linear_to_srgb(sampled) : sampled;
}

// Material stacks (tile_stack.hpp): every layer of a stack sampled with one level of detail,
// one indirection lookup (and fallback walk) and one bilinear footprint per probe, so that the
// layers always show the same level. layer[l] for l < t.layer_count, linear where the layer is
// sRGB; the rest are zero. The feedback of a stack is one entry: vt_feedback / vt_feedback_aniso
// on the stack's texture.
struct VtStackSample {
    vec4 layer[VT_MAX_STACK_LAYERS];
};

VtStackSample vt_stack_filled(vec4 value) {
    VtStackSample s;
    for (uint l = 0u; l < VT_MAX_STACK_LAYERS; ++l) s.layer[l] = value;
    return s;
}

VtStackSample vt_stack_mix(VtStackSample a, VtStackSample b, float weight) {
    for (uint l = 0u; l < VT_MAX_STACK_LAYERS; ++l) a.layer[l] = mix(a.layer[l], b.layer[l], weight);
    return a;
}

// Every layer bilinear at one level's resolved tile.
VtStackSample vt_stack_sample_level(VtTexture t, uint mip, vec2 uv, out uint resident_mip) {
    const VtResolved found = vt_resolve(t, mip, uv);
    resident_mip = found.mip;
    if (found.tile_address == 0ul) return vt_stack_filled(vt_missing_tail_colour);
    const VtFootprint footprint =
        vt_bilinear_footprint(found.position, t.tile_payload, t.tile_border);
    VtStackSample s = vt_stack_filled(vec4(0.0));
    for (uint l = 0u; l < VT_MAX_STACK_LAYERS; ++l) {
        if (l < t.layer_count) s.layer[l] = vt_bilinear(t, found.tile_address, footprint, l);
    }
    return s;
}

VtStackSample vt_stack_sample_lod_info(VtTexture t, vec2 uv, float lod, out VtSampleInfo info) {
    const uint mip0 = uint(floor(lod));
    const float blend = lod - float(mip0);
    info.lod = lod;
    info.wanted_mip = mip0;
    const VtStackSample fine = vt_stack_sample_level(t, mip0, uv, info.resident_mip);
    if (mip0 + 1u >= t.mip_count) return fine;
    uint coarse_mip;
    return vt_stack_mix(fine, vt_stack_sample_level(t, mip0 + 1u, uv, coarse_mip), blend);
}

VtStackSample vt_stack_sample_footprint_info(VtTexture t, vec2 uv,
                                             VtAnisotropicFootprint footprint,
                                             out VtSampleInfo info) {
    if (footprint.probes <= 1u) return vt_stack_sample_lod_info(t, uv, footprint.lod, info);
    const float n = float(footprint.probes);
    VtStackSample sum = vt_stack_filled(vec4(0.0));
    uint coarsest = 0u;
    for (uint i = 0u; i < footprint.probes; ++i) {
        VtSampleInfo probe;
        const vec2 at = uv + footprint.step * (float(i) + 0.5 - 0.5 * n);
        const VtStackSample p = vt_stack_sample_lod_info(t, at, footprint.lod, probe);
        for (uint l = 0u; l < VT_MAX_STACK_LAYERS; ++l) sum.layer[l] += p.layer[l];
        coarsest = max(coarsest, probe.resident_mip);
    }
    info.lod = footprint.lod;
    info.wanted_mip = uint(floor(footprint.lod));
    info.resident_mip = coarsest;
    for (uint l = 0u; l < VT_MAX_STACK_LAYERS; ++l) sum.layer[l] /= n;
    return sum;
}

VtStackSample vt_stack_sample_grad_aniso_info(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy,
                                              float lod_bias, float max_anisotropy,
                                              out VtSampleInfo info) {
    return vt_stack_sample_footprint_info(
        t, uv, vt_anisotropic_footprint(t, duv_dx, duv_dy, lod_bias, max_anisotropy), info);
}

VtStackSample vt_stack_sample_grad_aniso(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy,
                                         float lod_bias, float max_anisotropy) {
    VtSampleInfo info;
    return vt_stack_sample_grad_aniso_info(t, uv, duv_dx, duv_dy, lod_bias, max_anisotropy, info);
}

VtStackSample vt_stack_sample_grad(VtTexture t, vec2 uv, vec2 duv_dx, vec2 duv_dy,
                                   float lod_bias) {
    VtSampleInfo info;
    return vt_stack_sample_lod_info(t, uv, vt_clamped_lod(t, duv_dx, duv_dy, lod_bias), info);
}

// vt_output_colour for one layer of a stack.
vec4 vt_stack_output_colour(VtTexture t, uint layer, vec4 sampled) {
    return ((t.srgb_layers >> layer) & 1u) != 0u ? vt_linear_to_srgb(sampled) : sampled;
}

#ifdef VT_FRAGMENT_SHADER
VtStackSample vt_stack_sample(VtTexture t, vec2 uv) {
    return vt_stack_sample_grad(t, uv, dFdx(uv), dFdy(uv), 0.0);
}
VtStackSample vt_stack_sample_aniso(VtTexture t, vec2 uv, float max_anisotropy) {
    return vt_stack_sample_grad_aniso(t, uv, dFdx(uv), dFdy(uv), 0.0, max_anisotropy);
}
#endif

#ifdef VT_FRAGMENT_SHADER
vec4 vt_sample(VtTexture t, vec2 uv) { return vt_sample_grad(t, uv, dFdx(uv), dFdy(uv), 0.0); }
vec4 vt_sample_aniso(VtTexture t, vec2 uv, float max_anisotropy) {
    return vt_sample_grad_aniso(t, uv, dFdx(uv), dFdy(uv), 0.0, max_anisotropy);
}
#endif

#endif
