// Vulkan's wrapping of a texel index past a level's edge, written from the specification's
// formulas and apart from the library's vt::address_texel: the oracle the sampling tests hold
// the shaders, the baker's borders and address_texel itself to.
#pragma once

#include <cstdint>

#include "vtpage/streaming/layout/address_mode.hpp"

namespace vtpage::test {

// The texel of an axis of `size` texels that texel index `texel` (any integer: a bilinear
// footprint or a tile's border past the edge) shows.
constexpr std::uint32_t vulkan_wrap_texel(std::int64_t texel, std::uint32_t size,
                                          vt::AddressMode mode) {
    const std::int64_t n = size;
    if (mode == vt::AddressMode::repeat) return std::uint32_t(((texel % n) + n) % n);
    if (mode == vt::AddressMode::mirrored_repeat) {
        const std::int64_t m = ((texel % (2 * n)) + 2 * n) % (2 * n);  // in [0, 2n)
        return std::uint32_t(m < n ? m : 2 * n - 1 - m);
    }
    return std::uint32_t(texel < 0 ? 0 : texel >= n ? n - 1 : texel);
}

}  // namespace vtpage::test
