// The sRGB transfer function (IEC 61966-2-1) on 8-bit values, exactly: what a *_SRGB Vulkan format
// decodes before it filters, and what the bake uses to downsample sRGB colour in linear light.
#pragma once

#include <cstdint>

namespace vtpage::bake {

// The linear light (0 .. 1) of an 8-bit sRGB-encoded value.
double srgb_to_linear(std::uint8_t encoded);

// The 8-bit sRGB value nearest the encoding of `linear` (clamped to 0 .. 1): round(255 *
// e(linear)).
std::uint8_t linear_to_srgb(double linear);

}  // namespace vtpage::bake
