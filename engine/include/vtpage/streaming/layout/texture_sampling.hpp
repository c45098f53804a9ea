// How a texture is meant to be sampled: the address mode of each axis (as Vulkan samplers have
// them) and the colour space of its texels. Baked textures of format version 3 record it in
// their descriptor; older files read as the defaults (clamp to edge, linear).
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "vtpage/streaming/layout/address_mode.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::vt {

enum class ColorSpace : std::uint32_t {
    linear = 0,  // texels are the values (data, normals, or colour stored linear)
    srgb = 1,    // colour channels are sRGB-encoded (alpha stays linear): a *_SRGB Vulkan format
};
inline constexpr std::uint32_t color_space_count = 2;

struct TextureSampling {
    AddressMode address_u = AddressMode::clamp_to_edge;
    AddressMode address_v = AddressMode::clamp_to_edge;
    ColorSpace color_space = ColorSpace::linear;
    // A material stack's layers decoded from sRGB before filtering: bit l for layer l (bit 0
    // agrees with color_space). Plain textures leave it 0 and use color_space.
    std::uint32_t srgb_layers = 0;
    bool operator==(const TextureSampling&) const = default;
};

// Whether a format has an sRGB variant: rgba8, bc1 and bc3 (Vulkan has none for BC4 and BC5,
// whose channels are not colour).
constexpr bool srgb_allowed(TileFormat format) {
    return format == TileFormat::rgba8 || format == TileFormat::bc1 || format == TileFormat::bc3;
}

// std::floor, constexpr: floats of magnitude 2^23 and more (and infinities, NaN) are integers.
constexpr float floor_of(float u) {
    if (!(u > -8388608.0f && u < 8388608.0f)) return u;
    const float truncated = float(std::int64_t(u));
    return truncated > u ? truncated - 1.0f : truncated;
}

// A texture coordinate (u or v) wrapped into the texture as an axis of this mode addresses it,
// before the texel position is computed: repeat keeps u - floor(u) (in [0, 1]: 1 only where the
// subtraction rounds up, which the edge tile's border covers), mirrored repeat folds every other
// period back (Vulkan's MIRRORED_REPEAT), clamp to edge leaves u alone (the position is clamped
// to the level's texel centres). vt_wrap in shaders/vtpage/virtual_texture.glsl computes the same
// with the same operations, so that device and CPU find the same texels and tiles.
constexpr float wrap_uv(float u, AddressMode mode) {
    if (mode == AddressMode::repeat) return u - floor_of(u);
    if (mode == AddressMode::mirrored_repeat) {
        const float t = u - 2.0f * floor_of(u * 0.5f);  // in [0, 2]
        return t > 1.0f ? 2.0f - t : t;
    }
    return u;
}

// The sRGB transfer function (IEC 61966-2-1, exactly piecewise), one colour channel in [0, 1]:
// what a *_SRGB Vulkan format applies to each texel before filtering, and its inverse.
inline float srgb_to_linear(float encoded) {
    return encoded <= 0.04045f ? encoded / 12.92f : std::pow((encoded + 0.055f) / 1.055f, 2.4f);
}
inline float linear_to_srgb(float linear) {
    return linear <= 0.0031308f ? linear * 12.92f : 1.055f * std::pow(linear, 1.0f / 2.4f) - 0.055f;
}

// Known address modes and colour space, and sRGB only where the format has it.
constexpr bool sampling_valid(TextureSampling sampling, TileFormat format) {
    const auto known = [](AddressMode mode) {
        return static_cast<std::uint32_t>(mode) < address_mode_count;
    };
    return known(sampling.address_u) && known(sampling.address_v) &&
           static_cast<std::uint32_t>(sampling.color_space) < color_space_count &&
           (sampling.color_space != ColorSpace::srgb || srgb_allowed(format));
}

// The same for a texture of any shape: a stack's sRGB layers are layers whose format has sRGB,
// and its first layer's bit is its color_space.
constexpr bool sampling_valid(TextureSampling sampling, TextureShape shape) {
    if (!shape.stacked())
        return sampling.srgb_layers == 0 && sampling_valid(sampling, shape.format);
    if (!sampling_valid(sampling, shape.format)) return false;
    const std::uint32_t layers = shape.stack.count();
    if ((sampling.srgb_layers >> layers) != 0) return false;
    if (((sampling.srgb_layers & 1u) != 0) != (sampling.color_space == ColorSpace::srgb)) {
        return false;
    }
    for (std::uint32_t l = 0; l < layers; ++l) {
        if ((sampling.srgb_layers >> l & 1u) != 0 && !srgb_allowed(shape.stack.layer(l))) {
            return false;
        }
    }
    return true;
}

constexpr std::string_view address_mode_name(AddressMode mode) {
    switch (mode) {
        case AddressMode::clamp_to_edge:
            return "clamp_to_edge";
        case AddressMode::repeat:
            return "repeat";
        case AddressMode::mirrored_repeat:
            return "mirrored_repeat";
    }
    return "unknown";
}

constexpr std::string_view color_space_name(ColorSpace space) {
    return space == ColorSpace::srgb ? "srgb" : space == ColorSpace::linear ? "linear" : "unknown";
}

}  // namespace vtpage::vt
