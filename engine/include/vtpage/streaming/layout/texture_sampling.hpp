// How a texture is meant to be sampled: the address mode of each axis (as Vulkan samplers have
// them) and the colour space of its texels. Baked textures of format version 3 record it in
// their descriptor; older files read as the defaults (clamp to edge, linear).
#pragma once

#include <cstdint>
#include <string_view>

#include "vtpage/streaming/layout/address_mode.hpp"
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
    bool operator==(const TextureSampling&) const = default;
};

// Whether a format has an sRGB variant: rgba8, bc1 and bc3 (Vulkan has none for BC4 and BC5,
// whose channels are not colour).
constexpr bool srgb_allowed(TileFormat format) {
    return format == TileFormat::rgba8 || format == TileFormat::bc1 || format == TileFormat::bc3;
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
