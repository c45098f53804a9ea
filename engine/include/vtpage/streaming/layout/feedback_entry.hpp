// One entry of the feedback the renderer writes: which tile of which mip of which texture a
// pixel wanted. Shared by the C++ side, CUDA and the shaders (which write it as a uvec2 with the
// same packing; the shader constants are generated from this header).
#pragma once

#include <cstdint>

#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt {

struct FeedbackEntry {
    std::uint32_t texture_mip = empty;  // texture << 8 | mip; `empty` where nothing was sampled
    std::uint32_t tile_xy = 0;          // tile y << 16 | tile x

    static constexpr std::uint32_t empty = 0xffffffffu;
    static constexpr std::uint32_t max_textures = 1u << 24;

    VTPAGE_HOST_DEVICE static constexpr FeedbackEntry make(const TileId& tile) {
        return {tile.texture << 8 | tile.mip, tile.y << 16 | tile.x};
    }
    VTPAGE_HOST_DEVICE constexpr bool is_empty() const { return texture_mip == empty; }
    VTPAGE_HOST_DEVICE constexpr TileId tile() const {
        return {texture_mip >> 8, texture_mip & 0xffu, tile_xy & 0xffffu, tile_xy >> 16};
    }
};

static_assert(sizeof(FeedbackEntry) == 8, "the shaders write feedback as one uvec2 per entry");
static_assert((TextureLayout(max_size, 1).mips[0].tiles_x - 1) <= 0xffffu,
              "tile coordinates fit 16 bits");

}  // namespace vtpage::vt
