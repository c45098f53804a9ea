#include "reference_virtual_texture.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "../support/vulkan_texel_wrap.hpp"
#include "block_codec.hpp"
#include "streaming/sources/mix32.hpp"

namespace vtpage::test {

namespace {

Colour unpack(std::uint32_t texel) {
    return {float(texel & 255) / 255.0f, float((texel >> 8) & 255) / 255.0f,
            float((texel >> 16) & 255) / 255.0f, float(texel >> 24) / 255.0f};
}

// vt_axis_position: clamped to the texel centres, or wrapped into [0, size].
float axis_position(float u, std::uint32_t size, vt::AddressMode mode) {
    const float level = float(size);
    if (mode == vt::AddressMode::clamp_to_edge) return std::clamp(u * level, 0.5f, level - 0.5f);
    return std::clamp(vt::wrap_uv(u, mode) * level, 0.0f, level);
}

Colour srgb_to_linear(const Colour& c) {
    return {vt::srgb_to_linear(c.r), vt::srgb_to_linear(c.g), vt::srgb_to_linear(c.b), c.a};
}

// GLSL mix(): x * (1 - a) + y * a.
Colour mix(const Colour& x, const Colour& y, float a) {
    return {x.r * (1 - a) + y.r * a, x.g * (1 - a) + y.g * a, x.b * (1 - a) + y.b * a,
            x.a * (1 - a) + y.a * a};
}

}  // namespace

std::uint32_t pattern_texel(std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
    const std::uint32_t r = (x * 3 + mip * 50) & 255;  // ramps: position errors show
    const std::uint32_t g = (y * 3 + mip * 90) & 255;
    const std::uint32_t b = vt::mix32(x * 73856093u ^ y * 19349663u ^ mip * 83492791u) & 255;
    const std::uint32_t a = 255 - mip * 10;  // which level was sampled
    return r | g << 8 | b << 16 | a << 24;
}

std::vector<std::uint8_t> pattern_tile(const vt::TextureLayout& layout, std::uint32_t mip,
                                       std::uint32_t tile_x, std::uint32_t tile_y,
                                       const TextureContent& content) {
    const vt::TileFormatInfo info = layout.tile_format();
    const std::uint32_t size = info.tile_size;
    std::vector<std::uint8_t> rgba(std::size_t(size) * size * 4);
    const vt::MipLevel& level = layout.mips[mip];
    for (std::uint32_t ty = 0; ty < size; ++ty) {
        // The border repeats the neighbours' texels; beyond the level's edge, those the address
        // mode wraps to (the edge's for clamp, as vt::level_texel).
        const std::uint32_t y = test::vulkan_wrap_texel(
            std::int64_t(tile_y) * info.tile_payload() + ty - info.tile_border, level.height,
            content.sampling.address_v);
        for (std::uint32_t tx = 0; tx < size; ++tx) {
            const std::uint32_t x = test::vulkan_wrap_texel(
                std::int64_t(tile_x) * info.tile_payload() + tx - info.tile_border, level.width,
                content.sampling.address_u);
            const std::uint32_t texel = content.texel(mip, x, y);
            std::memcpy(&rgba[(std::size_t(ty) * size + tx) * 4], &texel, 4);
        }
    }
    return rgba;
}

void fill_tile(const vt::TextureLayout& layout, std::uint32_t mip, std::uint32_t tile_x,
               std::uint32_t tile_y, std::span<std::byte> out, const TextureContent& content) {
    const std::vector<std::uint8_t> rgba = pattern_tile(layout, mip, tile_x, tile_y, content);
    bake::encode_tile(layout.format, rgba, out, bake::EncodeQuality::fast);
}

void fill_page(const vt::TextureLayout& layout, std::uint64_t page, void* memory,
               const TextureContent& content) {
    auto* bytes = static_cast<std::byte*>(memory);
    const vt::TileFormatInfo info = layout.tile_format();
    std::memset(bytes, 0, vt::page_bytes);
    auto slot = [&](std::uint32_t tile_in_page) {
        return std::span<std::byte>(bytes + std::size_t(tile_in_page) * info.tile_bytes(),
                                    info.tile_bytes());
    };
    const std::uint32_t mip = layout.mip_of_page(page);
    if (layout.in_tail(mip)) {
        for (std::uint32_t level = layout.tail_first_mip; level < layout.mip_count; ++level) {
            fill_tile(layout, level, 0, 0, slot(level - layout.tail_first_mip), content);
        }
        return;
    }
    const vt::PagePosition position = vt::page_position(layout, page);
    const vt::MipLevel& level = layout.mips[mip];
    for (std::uint32_t j = 0; j < info.page_tiles_y; ++j) {
        for (std::uint32_t i = 0; i < info.page_tiles_x; ++i) {
            const std::uint32_t tile_x = position.x * info.page_tiles_x + i;
            const std::uint32_t tile_y = position.y * info.page_tiles_y + j;
            if (tile_x >= level.tiles_x || tile_y >= level.tiles_y) continue;
            fill_tile(layout, mip, tile_x, tile_y, slot(j * info.page_tiles_x + i), content);
        }
    }
}

TexelFunction decoded_tiles(const vt::TextureLayout& layout, TileFunction tile) {
    // Decoded tiles by (mip, tile x, tile y), filled on first use.
    auto tiles =
        std::make_shared<std::map<std::array<std::uint32_t, 3>, std::vector<std::uint8_t>>>();
    return [layout, tile = std::move(tile), tiles](std::uint32_t mip, std::uint32_t x,
                                                   std::uint32_t y) {
        const vt::TileFormatInfo info = layout.tile_format();
        const std::uint32_t tile_x = x / info.tile_payload(), tile_y = y / info.tile_payload();
        auto [it, fresh] = tiles->try_emplace({mip, tile_x, tile_y});
        if (fresh) {
            std::vector<std::byte> encoded(info.tile_bytes());
            tile(mip, tile_x, tile_y, encoded);
            it->second.resize(std::size_t(info.tile_size) * info.tile_size * 4);
            bake::decode_tile(layout.format, encoded, it->second);
        }
        const std::uint32_t lx = x - tile_x * info.tile_payload() + info.tile_border;
        const std::uint32_t ly = y - tile_y * info.tile_payload() + info.tile_border;
        std::uint32_t texel = 0;
        std::memcpy(&texel, &it->second[(std::size_t(ly) * info.tile_size + lx) * 4], 4);
        return texel;
    };
}

TexelFunction decoded_pattern(const vt::TextureLayout& layout, const TextureContent& content) {
    if (layout.format == vt::TileFormat::rgba8) return content.texel;
    return decoded_tiles(layout, [layout, content](std::uint32_t mip, std::uint32_t tile_x,
                                                   std::uint32_t tile_y, std::span<std::byte> out) {
        fill_tile(layout, mip, tile_x, tile_y, out, content);
    });
}

std::uint8_t to_unorm8(float value) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(value, 0.0f, 1.0f) * 255.0f));
}

ReferenceSampler::ReferenceSampler(vt::TextureShape shape,
                                   std::function<bool(std::uint64_t)> resident, TexelFunction texel,
                                   vt::TextureSampling sampling)
    : layout_(shape),
      resident_(std::move(resident)),
      texel_(std::move(texel)),
      sampling_(sampling) {}

ReferenceSampler::ReferenceSampler(std::uint32_t size_log2,
                                   std::function<bool(std::uint64_t)> resident, TexelFunction texel)
    : ReferenceSampler(vt::TextureShape::square(size_log2), std::move(resident), std::move(texel)) {
}

float ReferenceSampler::lod(float dudx, float dvdx, float dudy, float dvdy, float bias) const {
    const float width = float(layout_.width), height = float(layout_.height);
    const float dx_u = dudx * width, dx_v = dvdx * height, dy_u = dudy * width,
                dy_v = dvdy * height;
    const float rho2 =
        std::max(std::max(dx_u * dx_u + dx_v * dx_v, dy_u * dy_u + dy_v * dy_v), 1e-20f);
    const float lod = 0.5f * std::log2(rho2) + bias;
    return std::clamp(lod, 0.0f, float(layout_.mip_count - 1));
}

void ReferenceSampler::level_position(std::uint32_t mip, float u, float v, float& cx,
                                      float& cy) const {
    cx = axis_position(u, layout_.mips[mip].width, sampling_.address_u);
    cy = axis_position(v, layout_.mips[mip].height, sampling_.address_v);
}

std::uint32_t ReferenceSampler::tile_of(float c, std::uint32_t size) const {
    // c = size (a wrapped edge) belongs to the last tile, whose border holds what lies beyond.
    const std::uint32_t texel = std::min(std::uint32_t(std::floor(c)), size - 1);
    return texel / layout_.tile_format().tile_payload();
}

Colour ReferenceSampler::sample_level(std::uint32_t wanted, float u, float v,
                                      std::uint32_t& resident_mip) const {
    std::uint32_t mip = wanted;
    float cx = 0, cy = 0;
    for (;; ++mip) {
        level_position(mip, u, v, cx, cy);
        const std::uint32_t tile_x = tile_of(cx, layout_.mips[mip].width);
        const std::uint32_t tile_y = tile_of(cy, layout_.mips[mip].height);
        const std::uint64_t page = layout_.locate(mip, tile_x, tile_y).page;
        if (layout_.in_tail(mip) || resident_(page)) break;
    }
    resident_mip = mip;
    const std::uint32_t width = layout_.mips[mip].width, height = layout_.mips[mip].height;
    const float px = cx - 0.5f, py = cy - 0.5f;
    const float corner_x = std::floor(px), corner_y = std::floor(py);
    const float wx = px - corner_x, wy = py - corner_y;
    // The footprint's texel indices wrapped as Vulkan wraps them, each texel decoded from sRGB
    // before it is blended where the texture is sRGB.
    auto texel = [&](std::int64_t x, std::int64_t y) {
        const Colour stored =
            unpack(texel_(mip, test::vulkan_wrap_texel(x, width, sampling_.address_u),
                          test::vulkan_wrap_texel(y, height, sampling_.address_v)));
        return sampling_.color_space == vt::ColorSpace::srgb ? srgb_to_linear(stored) : stored;
    };
    const std::int64_t x0 = std::int64_t(corner_x), y0 = std::int64_t(corner_y);
    return mix(mix(texel(x0, y0), texel(x0 + 1, y0), wx),
               mix(texel(x0, y0 + 1), texel(x0 + 1, y0 + 1), wx), wy);
}

Colour ReferenceSampler::sample(float u, float v, float dudx, float dvdx, float dudy, float dvdy,
                                float bias, std::uint32_t* wanted_mip,
                                std::uint32_t* resident_mip) const {
    const float level = lod(dudx, dvdx, dudy, dvdy, bias);
    const std::uint32_t mip0 = std::uint32_t(std::floor(level));
    const float blend = level - float(mip0);
    std::uint32_t resident0 = 0, resident1 = 0;
    const Colour fine = sample_level(mip0, u, v, resident0);
    if (wanted_mip) *wanted_mip = mip0;
    if (resident_mip) *resident_mip = resident0;
    if (mip0 + 1 >= layout_.mip_count) return fine;
    const Colour coarse = sample_level(mip0 + 1, u, v, resident1);
    return mix(fine, coarse, blend);
}

vt::FeedbackEntry ReferenceSampler::feedback(std::uint32_t texture, float u, float v, float dudx,
                                             float dvdx, float dudy, float dvdy, float bias) const {
    const std::uint32_t mip = std::uint32_t(std::floor(lod(dudx, dvdx, dudy, dvdy, bias)));
    float cx = 0, cy = 0;
    level_position(mip, u, v, cx, cy);
    return vt::FeedbackEntry::make({texture, mip, tile_of(cx, layout_.mips[mip].width),
                                    tile_of(cy, layout_.mips[mip].height)});
}

Colour output_colour(const Colour& sampled, const vt::TextureSampling& sampling) {
    if (sampling.color_space != vt::ColorSpace::srgb) return sampled;
    return {vt::linear_to_srgb(sampled.r), vt::linear_to_srgb(sampled.g),
            vt::linear_to_srgb(sampled.b), sampled.a};
}

}  // namespace vtpage::test
