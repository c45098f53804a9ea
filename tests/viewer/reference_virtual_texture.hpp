// A virtual texture for the renderer tests: a deterministic texel pattern, the tiles of each page
// filled from it (borders included) straight from texture_layout.hpp, and a CPU reference of
// shaders/vtpage/virtual_texture.glsl that samples the flat pattern (no tiles, no borders) with
// the same arithmetic. A renderer that matches it finds pages, tiles and borders correctly.
// Address modes and sRGB as the shader applies them (vt::TextureSampling): the reference wraps
// the footprint's texel indices as Vulkan does (test::vulkan_wrap_texel) and decodes sRGB texels
// before blending; the tiles' borders hold the texels the modes wrap to.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "vtpage/streaming/layout/feedback_entry.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vtpage::test {

// RGBA8 of texel (x, y) of a mip level, packed as the shaders read it (R in the low byte).
std::uint32_t pattern_texel(std::uint32_t mip, std::uint32_t x, std::uint32_t y);

// Texel (x, y) of a mip level as RGBA8, R in the low byte; x, y < the level's size.
using TexelFunction =
    std::function<std::uint32_t(std::uint32_t mip, std::uint32_t x, std::uint32_t y)>;

// What a test texture holds: its texels (the pattern by default) and how it is sampled, which
// its tiles' borders follow.
struct TextureContent {
    TexelFunction texel = pattern_texel;
    vt::TextureSampling sampling;
};

// The RGBA8 texels of one tile of the layout's format (tile_size x tile_size, the border
// included, holding the texels the address modes wrap to beyond the level's edges).
std::vector<std::uint8_t> pattern_tile(const vt::TextureLayout& layout, std::uint32_t mip,
                                       std::uint32_t tile_x, std::uint32_t tile_y,
                                       const TextureContent& content = {});
// Writes every tile of page `page` (relative to the texture) into `memory` (2 MiB), encoded in
// the layout's format (libsquish for the block-compressed ones).
void fill_page(const vt::TextureLayout& layout, std::uint64_t page, void* memory,
               const TextureContent& content = {});

struct Colour {
    float r = 0, g = 0, b = 0, a = 0;
};

// 8-bit UNORM as the colour attachment stores it.
std::uint8_t to_unorm8(float value);

// Writes tile (mip, x, y) in the layout's format into `out` (the format's tile_bytes).
using TileFunction = std::function<void(std::uint32_t mip, std::uint32_t tile_x,
                                        std::uint32_t tile_y, std::span<std::byte> out)>;

// The texels of the tiles `tile` writes, as libsquish decodes them (the reference decoder,
// independent of the shader's); each tile decoded on first use.
TexelFunction decoded_tiles(const vt::TextureLayout& layout, TileFunction tile);

// The texels a renderer shows for the pattern in the layout's format: the pattern itself for
// RGBA8; for the block-compressed formats, the decoded tiles of the blocks fill_page wrote.
TexelFunction decoded_pattern(const vt::TextureLayout& layout, const TextureContent& content = {});

class ReferenceSampler {
public:
    // resident(page): whether a page (relative to the texture) is resident; the tail always is.
    // texel: the flat texture sampled (the pattern above by default).
    ReferenceSampler(vt::TextureShape shape, std::function<bool(std::uint64_t)> resident,
                     TexelFunction texel = pattern_texel, vt::TextureSampling sampling = {});
    // A square RGBA8 texture 2^size_log2 texels on a side.
    ReferenceSampler(std::uint32_t size_log2, std::function<bool(std::uint64_t)> resident,
                     TexelFunction texel = pattern_texel);

    // vt_sample_grad_info: trilinear with fallback; resident_mip as the shader reports it. The
    // colour is linear for an sRGB texture (vt_output_colour's input).
    Colour sample(float u, float v, float dudx, float dvdx, float dudy, float dvdy, float bias,
                  std::uint32_t* wanted_mip = nullptr, std::uint32_t* resident_mip = nullptr) const;
    // vt_feedback.
    vt::FeedbackEntry feedback(std::uint32_t texture, float u, float v, float dudx, float dvdx,
                               float dudy, float dvdy, float bias) const;
    // The continuous texel position of uv at a level (vt_level_position's c, uv wrapped by the
    // address modes), for tests that stay away from tile edges.
    void level_position(std::uint32_t mip, float u, float v, float& cx, float& cy) const;
    float lod(float dudx, float dvdx, float dudy, float dvdy, float bias) const;

    const vt::TextureLayout& layout() const { return layout_; }
    const vt::TextureSampling& sampling() const { return sampling_; }

private:
    Colour sample_level(std::uint32_t mip, float u, float v, std::uint32_t& resident_mip) const;
    // The tile (one axis) that holds continuous position c of a level `size` texels across.
    std::uint32_t tile_of(float c, std::uint32_t size) const;

    vt::TextureLayout layout_;
    std::function<bool(std::uint64_t)> resident_;
    TexelFunction texel_;
    vt::TextureSampling sampling_;
};

// What vt_output_colour writes for a sampled colour: sRGB-encoded for an sRGB texture.
Colour output_colour(const Colour& sampled, const vt::TextureSampling& sampling);

}  // namespace vtpage::test
