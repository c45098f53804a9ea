// Where every texel of a virtual texture lives in the page table's address space. One header for
// C++ and CUDA (no library calls, everything constexpr); the shaders get the same constants
// generated from it at build time.
//
// A texture is square, 2^n texels on a side (n <= 20), with a full mip chain. Each mip level is
// cut into tiles of 128 x 128 RGBA8 texels (64 KiB) whose outer 4 texels are a border copied
// from the neighbours, so that bilinear filtering never leaves a tile: a tile carries 120 x 120
// texels of its own. A 2 MiB page holds a block of 8 x 4 tiles of one mip level. The levels that
// fit in one tile (120 texels or less) share one page, the packed mip tail, one tile each: the
// tail is small and is kept resident so that sampling always has a fallback.
//
// Page order within a texture: mip 0's pages row by row, then mip 1's, ..., then the tail page.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VTPAGE_HOST_DEVICE __host__ __device__
#else
#define VTPAGE_HOST_DEVICE
#endif

namespace vtpage::vt {

inline constexpr std::uint32_t tile_size = 128;  // texels per side, border included
inline constexpr std::uint32_t tile_border = 4;  // texels of border on each side
inline constexpr std::uint32_t tile_payload = tile_size - 2 * tile_border;        // 120
inline constexpr std::uint32_t texel_bytes = 4;                                   // RGBA8
inline constexpr std::uint32_t tile_bytes = tile_size * tile_size * texel_bytes;  // 64 KiB
inline constexpr std::uint32_t page_tiles_x = 8;  // a page is a block of 8 x 4 tiles
inline constexpr std::uint32_t page_tiles_y = 4;
inline constexpr std::uint32_t tiles_per_page = page_tiles_x * page_tiles_y;             // 32
inline constexpr std::uint64_t page_bytes = std::uint64_t(tile_bytes) * tiles_per_page;  // 2 MiB
inline constexpr std::uint32_t max_size_log2 = 20;  // 1M x 1M texels
inline constexpr std::uint32_t max_mips = max_size_log2 + 1;

static_assert(page_bytes == 2u * 1024u * 1024u, "a page is 2 MiB, the CUDA granularity");

// A tile of one mip level of one texture.
struct TileId {
    std::uint32_t texture = 0;
    std::uint32_t mip = 0;
    std::uint32_t x = 0;
    std::uint32_t y = 0;
};

// Where a tile lives: its page (relative to the texture's first page) and its slot in it.
struct TileLocation {
    std::uint64_t page = 0;
    std::uint32_t tile_in_page = 0;
    VTPAGE_HOST_DEVICE constexpr std::uint64_t byte_offset() const {
        return std::uint64_t(tile_in_page) * tile_bytes;
    }
};

struct MipLevel {
    std::uint32_t size = 0;     // texels per side
    std::uint32_t tiles = 0;    // tiles per side
    std::uint32_t pages_x = 0;  // pages per row (0 for levels in the tail)
    std::uint32_t pages_y = 0;
    std::uint64_t first_page = 0;  // relative to the texture
};

// The layout of one texture, computed from its size alone.
struct TextureLayout {
    std::uint32_t size_log2 = 0;
    std::uint32_t mip_count = 0;       // size_log2 + 1: down to 1 x 1
    std::uint32_t tail_first_mip = 0;  // the first level that fits one tile
    std::uint64_t page_count = 0;      // pages of the texture, tail included
    MipLevel mips[max_mips] = {};

    VTPAGE_HOST_DEVICE constexpr explicit TextureLayout(std::uint32_t log2 = 0)
        : size_log2(log2 > max_size_log2 ? max_size_log2 : log2), mip_count(size_log2 + 1) {
        std::uint64_t next_page = 0;
        tail_first_mip = mip_count;
        for (std::uint32_t mip = 0; mip < mip_count; ++mip) {
            MipLevel& level = mips[mip];
            level.size = 1u << (size_log2 - mip);
            level.tiles = (level.size + tile_payload - 1) / tile_payload;
            if (level.tiles == 1 && tail_first_mip == mip_count) tail_first_mip = mip;
            if (mip >= tail_first_mip) continue;
            level.pages_x = (level.tiles + page_tiles_x - 1) / page_tiles_x;
            level.pages_y = (level.tiles + page_tiles_y - 1) / page_tiles_y;
            level.first_page = next_page;
            next_page += std::uint64_t(level.pages_x) * level.pages_y;
        }
        for (std::uint32_t mip = tail_first_mip; mip < mip_count; ++mip) {
            mips[mip].first_page = next_page;  // all tail levels share the one tail page
        }
        page_count = next_page + 1;
    }

    VTPAGE_HOST_DEVICE constexpr std::uint32_t size() const { return 1u << size_log2; }
    VTPAGE_HOST_DEVICE constexpr std::uint64_t tail_page() const { return page_count - 1; }
    VTPAGE_HOST_DEVICE constexpr bool in_tail(std::uint32_t mip) const {
        return mip >= tail_first_mip;
    }
    // The caller keeps mip < mip_count and x, y < mips[mip].tiles.
    VTPAGE_HOST_DEVICE constexpr TileLocation locate(std::uint32_t mip, std::uint32_t x,
                                                     std::uint32_t y) const {
        if (in_tail(mip)) return {tail_page(), mip - tail_first_mip};
        const MipLevel& level = mips[mip];
        const std::uint64_t page =
            level.first_page + std::uint64_t(y / page_tiles_y) * level.pages_x + x / page_tiles_x;
        return {page, (y % page_tiles_y) * page_tiles_x + x % page_tiles_x};
    }
    // The mip level a page belongs to.
    VTPAGE_HOST_DEVICE constexpr std::uint32_t mip_of_page(std::uint64_t page) const {
        for (std::uint32_t mip = 0; mip < tail_first_mip; ++mip) {
            const MipLevel& level = mips[mip];
            if (page < level.first_page + std::uint64_t(level.pages_x) * level.pages_y) return mip;
        }
        return tail_first_mip;
    }
    // Total texels of payload in bytes, mip 0 only: what a flat RGBA8 copy would need.
    VTPAGE_HOST_DEVICE constexpr std::uint64_t flat_bytes() const {
        return std::uint64_t(size()) * size() * texel_bytes;
    }
};

// Byte offset of texel (tx, ty) of a tile (0..127 each, the border included) from the tile start.
VTPAGE_HOST_DEVICE constexpr std::uint32_t texel_offset(std::uint32_t tx, std::uint32_t ty) {
    return (ty * tile_size + tx) * texel_bytes;
}

// The texel of a mip level (one axis) that texel t (0..127, the border included) of tile `tile`
// shows. Tile n's payload starts at level texel n * 120, so its border repeats the neighbours'
// texels; at the texture's edge the border repeats the edge texel (clamp). Tail levels are tile 0.
VTPAGE_HOST_DEVICE constexpr std::uint32_t level_texel(std::uint32_t tile, std::uint32_t t,
                                                       std::uint32_t level_size) {
    const std::int64_t texel = std::int64_t(tile) * tile_payload + std::int64_t(t) - tile_border;
    if (texel < 0) return 0;
    if (texel >= std::int64_t(level_size)) return level_size - 1;
    return std::uint32_t(texel);
}

// A page of a texture as a position in its mip level: page (x, y) of mip `mip` holds tiles
// [8x, 8x + 8) x [4y, 4y + 4). The tail page is (0, 0) of tail_first_mip.
struct PagePosition {
    std::uint32_t mip = 0;
    std::uint32_t x = 0;
    std::uint32_t y = 0;
    // Spelled out: CUDA code is compiled as C++17, which has no defaulted comparisons.
    VTPAGE_HOST_DEVICE friend constexpr bool operator==(const PagePosition& a,
                                                        const PagePosition& b) {
        return a.mip == b.mip && a.x == b.x && a.y == b.y;
    }
};

VTPAGE_HOST_DEVICE constexpr PagePosition page_position(const TextureLayout& layout,
                                                        std::uint64_t page) {
    const std::uint32_t mip = layout.mip_of_page(page);
    if (layout.in_tail(mip)) return {mip, 0, 0};
    const MipLevel& level = layout.mips[mip];
    const std::uint64_t index = page - level.first_page;
    return {mip, std::uint32_t(index % level.pages_x), std::uint32_t(index / level.pages_x)};
}

VTPAGE_HOST_DEVICE constexpr std::uint64_t page_at(const TextureLayout& layout,
                                                   const PagePosition& position) {
    if (layout.in_tail(position.mip)) return layout.tail_page();
    const MipLevel& level = layout.mips[position.mip];
    return level.first_page + std::uint64_t(position.y) * level.pages_x + position.x;
}

// The page of the next coarser mip that covers the same area. A tile's payload halves at the
// next level and 120 is even, so tile (x, y) lies inside tile (x / 2, y / 2) there, and a page
// of 8 x 4 tiles inside page (x / 2, y / 2). The tail page is its own parent.
VTPAGE_HOST_DEVICE constexpr std::uint64_t parent_page(const TextureLayout& layout,
                                                       std::uint64_t page) {
    const PagePosition position = page_position(layout, page);
    if (layout.in_tail(position.mip) || position.mip + 1 >= layout.mip_count) {
        return layout.tail_page();
    }
    return page_at(layout, {position.mip + 1, position.x / 2, position.y / 2});
}

static_assert(TextureLayout(20).tail_first_mip == 14, "levels of 64 texels or less share the tail");
static_assert(TextureLayout(0).page_count == 1, "a 1 x 1 texture is just its tail");
static_assert(tile_payload % 2 == 0, "a tile lies inside one tile of the next coarser level");

}  // namespace vtpage::vt
