#include "reference_virtual_texture.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vtpage::test {

namespace {

std::uint32_t mix_bits(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

Colour unpack(std::uint32_t texel) {
    return {float(texel & 255) / 255.0f, float((texel >> 8) & 255) / 255.0f,
            float((texel >> 16) & 255) / 255.0f, float(texel >> 24) / 255.0f};
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
    const std::uint32_t b = mix_bits(x * 73856093u ^ y * 19349663u ^ mip * 83492791u) & 255;
    const std::uint32_t a = 255 - mip * 10;  // which level was sampled
    return r | g << 8 | b << 16 | a << 24;
}

void fill_page(const vt::TextureLayout& layout, std::uint64_t page, void* memory) {
    auto* bytes = static_cast<std::uint8_t*>(memory);
    auto fill_tile = [&](std::uint32_t mip, std::uint32_t tile_x, std::uint32_t tile_y,
                         std::uint32_t tile_in_page) {
        const std::int64_t width = layout.mips[mip].width;
        const std::int64_t height = layout.mips[mip].height;
        auto* texels =
            reinterpret_cast<std::uint32_t*>(bytes + std::size_t(tile_in_page) * vt::tile_bytes);
        for (std::uint32_t ty = 0; ty < vt::tile_size; ++ty) {
            // The border repeats the neighbours' texels; beyond the level's edge, the edge's.
            const std::int64_t y = std::clamp<std::int64_t>(
                std::int64_t(tile_y) * vt::tile_payload + ty - vt::tile_border, 0, height - 1);
            for (std::uint32_t tx = 0; tx < vt::tile_size; ++tx) {
                const std::int64_t x = std::clamp<std::int64_t>(
                    std::int64_t(tile_x) * vt::tile_payload + tx - vt::tile_border, 0, width - 1);
                texels[ty * vt::tile_size + tx] =
                    pattern_texel(mip, std::uint32_t(x), std::uint32_t(y));
            }
        }
    };
    const std::uint32_t mip = layout.mip_of_page(page);
    if (layout.in_tail(mip)) {
        for (std::uint32_t level = layout.tail_first_mip; level < layout.mip_count; ++level) {
            fill_tile(level, 0, 0, level - layout.tail_first_mip);
        }
        return;
    }
    const vt::MipLevel& level = layout.mips[mip];
    const std::uint64_t in_level = page - level.first_page;
    const std::uint32_t page_x = std::uint32_t(in_level % level.pages_x);
    const std::uint32_t page_y = std::uint32_t(in_level / level.pages_x);
    for (std::uint32_t j = 0; j < vt::page_tiles_y; ++j) {
        for (std::uint32_t i = 0; i < vt::page_tiles_x; ++i) {
            const std::uint32_t tile_x = page_x * vt::page_tiles_x + i;
            const std::uint32_t tile_y = page_y * vt::page_tiles_y + j;
            if (tile_x >= level.tiles_x || tile_y >= level.tiles_y) continue;
            fill_tile(mip, tile_x, tile_y, j * vt::page_tiles_x + i);
        }
    }
}

std::uint8_t to_unorm8(float value) {
    return static_cast<std::uint8_t>(std::lround(std::clamp(value, 0.0f, 1.0f) * 255.0f));
}

ReferenceSampler::ReferenceSampler(vt::TextureShape shape,
                                   std::function<bool(std::uint64_t)> resident, TexelFunction texel)
    : layout_(shape), resident_(std::move(resident)), texel_(std::move(texel)) {}

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
    const float width = float(layout_.mips[mip].width);
    const float height = float(layout_.mips[mip].height);
    cx = std::clamp(u * width, 0.5f, width - 0.5f);
    cy = std::clamp(v * height, 0.5f, height - 0.5f);
}

Colour ReferenceSampler::sample_level(std::uint32_t wanted, float u, float v,
                                      std::uint32_t& resident_mip) const {
    std::uint32_t mip = wanted;
    float cx = 0, cy = 0;
    for (;; ++mip) {
        level_position(mip, u, v, cx, cy);
        const std::uint32_t tile_x = std::uint32_t(std::floor(cx)) / vt::tile_payload;
        const std::uint32_t tile_y = std::uint32_t(std::floor(cy)) / vt::tile_payload;
        const std::uint64_t page = layout_.locate(mip, tile_x, tile_y).page;
        if (layout_.in_tail(mip) || resident_(page)) break;
    }
    resident_mip = mip;
    const std::int64_t last_x = std::int64_t(layout_.mips[mip].width) - 1;
    const std::int64_t last_y = std::int64_t(layout_.mips[mip].height) - 1;
    const float px = cx - 0.5f, py = cy - 0.5f;
    const float corner_x = std::floor(px), corner_y = std::floor(py);
    const float wx = px - corner_x, wy = py - corner_y;
    auto texel = [&](std::int64_t x, std::int64_t y) {
        return unpack(texel_(mip, std::uint32_t(std::clamp<std::int64_t>(x, 0, last_x)),
                             std::uint32_t(std::clamp<std::int64_t>(y, 0, last_y))));
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
    return vt::FeedbackEntry::make({texture, mip, std::uint32_t(std::floor(cx)) / vt::tile_payload,
                                    std::uint32_t(std::floor(cy)) / vt::tile_payload});
}

}  // namespace vtpage::test
