// A 32-bit integer mixer (lowbias32: good avalanche for two multiplies), the hash behind the
// procedural and the identity textures. Integer arithmetic only, so the CPU and CUDA compute the
// same words (shaders/vtpage/identity_pattern.glsl spells it out again for the shaders).
#pragma once

#include <cstdint>

#include "vtpage/streaming/layout/tile_format.hpp"  // VTPAGE_HOST_DEVICE

namespace vtpage::vt {

VTPAGE_HOST_DEVICE constexpr std::uint32_t mix32(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

}  // namespace vtpage::vt
