// How a texture is addressed past its edges, per axis, as Vulkan samplers do, and the texel of a
// level that a coordinate outside it reads. One header for C++, CUDA (C++17) and the CPU
// references of the shaders: the baker fills tile borders with it, and sampling wraps with it.
#pragma once

#include <cstdint>

#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::vt {

// The values stored in a file (not Vulkan's VkSamplerAddressMode numbers: zero is the default
// so that a descriptor with zero there means what older files meant).
enum class AddressMode : std::uint32_t {
    clamp_to_edge = 0,    // VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
    repeat = 1,           // VK_SAMPLER_ADDRESS_MODE_REPEAT
    mirrored_repeat = 2,  // VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT
};
inline constexpr std::uint32_t address_mode_count = 3;

// The texel in [0, size) that texel coordinate `texel` of a level `size` texels long reads
// (size >= 1; a size of 0 reads as 1). Clamp to edge clamps; repeat wraps (texel mod size: -1
// reads size - 1); mirrored repeat reflects with period 2 * size as Vulkan's MIRRORED_REPEAT
// does: -1 reads 0, -2 reads 1, size reads size - 1, size + 1 reads size - 2.
VTPAGE_HOST_DEVICE constexpr std::uint32_t address_texel(AddressMode mode, std::int64_t texel,
                                                         std::uint32_t size) {
    const std::int64_t n = size < 1 ? 1 : std::int64_t(size);
    if (mode == AddressMode::repeat) {
        const std::int64_t wrapped = texel % n;
        return std::uint32_t(wrapped < 0 ? wrapped + n : wrapped);
    }
    if (mode == AddressMode::mirrored_repeat) {
        std::int64_t wrapped = texel % (2 * n);
        if (wrapped < 0) wrapped += 2 * n;
        return std::uint32_t(wrapped < n ? wrapped : 2 * n - 1 - wrapped);
    }
    return std::uint32_t(texel < 0 ? 0 : texel >= n ? n - 1 : texel);
}

static_assert(address_texel(AddressMode::repeat, -1, 5) == 4 &&
                  address_texel(AddressMode::repeat, 5, 5) == 0 &&
                  address_texel(AddressMode::repeat, -11, 5) == 4,
              "repeat wraps: the texel left of column 0 is the last column");
static_assert(address_texel(AddressMode::mirrored_repeat, -1, 5) == 0 &&
                  address_texel(AddressMode::mirrored_repeat, -2, 5) == 1 &&
                  address_texel(AddressMode::mirrored_repeat, 5, 5) == 4 &&
                  address_texel(AddressMode::mirrored_repeat, 6, 5) == 3 &&
                  address_texel(AddressMode::mirrored_repeat, 10, 5) == 0 &&
                  address_texel(AddressMode::mirrored_repeat, -3, 2) == 1 &&
                  address_texel(AddressMode::mirrored_repeat, 4, 2) == 0,
              "mirrored repeat reflects with period 2 * size, as Vulkan's");
static_assert(address_texel(AddressMode::mirrored_repeat, -3, 1) == 0 &&
                  address_texel(AddressMode::repeat, 7, 1) == 0 &&
                  address_texel(AddressMode::clamp_to_edge, -4, 1) == 0,
              "a level of one texel reads that texel whatever the mode");
static_assert(address_texel(AddressMode::clamp_to_edge, -1, 5) == 0 &&
                  address_texel(AddressMode::clamp_to_edge, 9, 5) == 4,
              "clamp to edge repeats the edge texel");

}  // namespace vtpage::vt
