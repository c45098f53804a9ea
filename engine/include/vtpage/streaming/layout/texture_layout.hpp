// Where every texel of a virtual texture lives in the page table's address space. One header for
// C++ and CUDA (no library calls, everything constexpr); the shaders get the same constants
// generated from it at build time, and each texture's numbers from VulkanTextureInfo.
//
// A texture is W x H texels (1 <= W, H <= 2^20, any shape) in one tile format (tile_format.hpp),
// with Vulkan's mip chain: level m is max(1, W >> m) x max(1, H >> m), down to 1 x 1. Each level
// is cut into tiles whose outer 4 texels are a border copied from the neighbours, so that
// bilinear filtering never leaves a tile: an RGBA8 tile is 128 x 128 texels and carries 120 x 120
// of its own. A 2 MiB page holds a block of tiles of one level (8 x 4 RGBA8 tiles). Levels are
// padded only up to whole tiles and pages. The levels that fit in one tile share one page, the
// packed mip tail, one tile each: the tail is small and is kept resident so that sampling always
// has a fallback.
//
// Page order within a texture: mip 0's pages row by row, then mip 1's, ..., then the tail page.
//
// Tile levels: a shape may ask for its finest levels (tile_levels of them) to be streamed a tile
// at a time. In those a virtual page is one tile (a page shape of 1 x 1 tiles), so that each tile
// has its own indirection entry and is made resident alone, placed by the streamer in pages it
// shares among tiles. Sources fill whole pages all the same: their pages are numbered in the
// layout without tile levels (the source layout), and source_location() says where a virtual
// page's bytes are there.
// At sizes that are not powers of two a tile of one level does not lie inside one tile of the
// next: the coarser page that covers a place is found from the place (covering_page), never from
// tile x / 2.
#pragma once

#include <cstdint>

#include "vtpage/streaming/layout/tile_format.hpp"
#include "vtpage/streaming/layout/tile_stack.hpp"

namespace vtpage::vt {

// The RGBA8 format's tile shape, for the code that only ever handles RGBA8 tiles (the procedural
// and identity sources, baked files of version 1). Code that takes any format reads
// TextureLayout::tile_format() instead.
inline constexpr std::uint32_t tile_size = 128;  // texels per side, border included
inline constexpr std::uint32_t tile_border = 4;  // texels of border on each side
inline constexpr std::uint32_t tile_payload = tile_size - 2 * tile_border;        // 120
inline constexpr std::uint32_t texel_bytes = 4;                                   // RGBA8
inline constexpr std::uint32_t tile_bytes = tile_size * tile_size * texel_bytes;  // 64 KiB
inline constexpr std::uint32_t page_tiles_x = 8;  // a page is a block of 8 x 4 tiles
inline constexpr std::uint32_t page_tiles_y = 4;
inline constexpr std::uint32_t tiles_per_page = page_tiles_x * page_tiles_y;             // 32
inline constexpr std::uint64_t page_bytes = std::uint64_t(tile_bytes) * tiles_per_page;  // 2 MiB
inline constexpr std::uint32_t max_size_log2 = 20;  // 1M texels on a side
inline constexpr std::uint32_t max_size = 1u << max_size_log2;
inline constexpr std::uint32_t max_mips = max_size_log2 + 1;

static_assert(page_bytes == format_page_bytes, "a page is 2 MiB, the CUDA granularity");
static_assert(tile_format_info(TileFormat::rgba8).tile_size == tile_size &&
                  tile_format_info(TileFormat::rgba8).tile_bytes() == tile_bytes &&
                  tile_format_info(TileFormat::rgba8).page_tiles_x == page_tiles_x &&
                  tile_format_info(TileFormat::rgba8).page_tiles_y == page_tiles_y,
              "the RGBA8 constants are the RGBA8 format's shape");

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
    std::uint32_t tile_bytes = vtpage::vt::tile_bytes;  // of the texture's format
    VTPAGE_HOST_DEVICE constexpr std::uint64_t byte_offset() const {
        return std::uint64_t(tile_in_page) * tile_bytes;
    }
};

// A texture's size and format: all that its layout depends on.
struct TextureShape {
    std::uint32_t width = 1;
    std::uint32_t height = 1;
    TileFormat format = TileFormat::rgba8;
    // A material stack's layers (tile_stack.hpp); none for a plain texture. A stack's format is
    // its first layer's.
    TileStack stack = {};
    // The finest levels streamed a tile at a time (see above); levels of the tail never are.
    std::uint32_t tile_levels = 0;

    // Whether a layout can be made: 1 .. 2^20 texels on a side and a known format, or a valid
    // stack whose first layer is the format.
    VTPAGE_HOST_DEVICE constexpr bool valid() const {
        return width >= 1 && height >= 1 && width <= max_size && height <= max_size &&
               valid_tile_format(std::uint32_t(format)) && tile_levels <= max_mips &&
               (stack.packed == 0 || (stack.valid() && stack.layer(0) == format));
    }
    VTPAGE_HOST_DEVICE constexpr bool stacked() const { return stack.packed != 0; }
    // The same texture with no tile levels: the layout its source's pages are numbered in.
    VTPAGE_HOST_DEVICE constexpr TextureShape untiled() const {
        return {width, height, format, stack};
    }
    // The shape of a stack of the given layers (check valid(): the layers may not stack).
    VTPAGE_HOST_DEVICE static constexpr TextureShape stacked_shape(std::uint32_t width,
                                                                   std::uint32_t height,
                                                                   TileStack layers) {
        return {width, height, layers.count() > 0 ? layers.layer(0) : TileFormat::rgba8, layers};
    }
    // The shape of textures that are 2^log2 texels on a side, RGBA8 (not valid() past 2^20).
    VTPAGE_HOST_DEVICE static constexpr TextureShape square(std::uint32_t log2) {
        const std::uint32_t size = log2 > 31 ? 0 : 1u << log2;
        return {size, size, TileFormat::rgba8};
    }
    VTPAGE_HOST_DEVICE friend constexpr bool operator==(const TextureShape& a,
                                                        const TextureShape& b) {
        return a.width == b.width && a.height == b.height && a.format == b.format &&
               a.stack == b.stack && a.tile_levels == b.tile_levels;
    }
};

struct MipLevel {
    std::uint32_t width = 0;  // texels
    std::uint32_t height = 0;
    std::uint32_t tiles_x = 0;  // tiles per row (1 for levels in the tail)
    std::uint32_t tiles_y = 0;
    std::uint32_t pages_x = 0;  // pages per row (0 for levels in the tail)
    std::uint32_t pages_y = 0;
    std::uint64_t first_page = 0;  // relative to the texture
    // The tiles of one page: the format's page shape, 1 x 1 in tile levels (0 in the tail).
    std::uint32_t page_tiles_x = 0;
    std::uint32_t page_tiles_y = 0;
};

// The layout of one texture, computed from its shape alone. A shape that is not valid() is
// clamped into range (width and height to 1 .. 2^20, an unknown format to RGBA8): callers that
// take shapes from outside check valid() first.
struct TextureLayout {
    std::uint32_t width = 1;
    std::uint32_t height = 1;
    TileFormat format = TileFormat::rgba8;
    TileStack stack = {};              // a material stack's layers; none for a plain texture
    std::uint32_t mip_count = 0;       // down to 1 x 1
    std::uint32_t tail_first_mip = 0;  // the first level that fits one tile
    std::uint32_t tile_levels = 0;     // levels [0, tile_levels) hold a tile a page
    std::uint64_t page_count = 0;      // pages of the texture, tail included
    MipLevel mips[max_mips] = {};

    VTPAGE_HOST_DEVICE constexpr explicit TextureLayout(TextureShape shape)
        : width(clamp_size(shape.width)),
          height(clamp_size(shape.height)),
          format(valid_tile_format(std::uint32_t(shape.format)) ? shape.format : TileFormat::rgba8),
          stack(shape.stack.valid() && shape.stack.layer(0) == format ? shape.stack : TileStack{}),
          mip_count(mip_count_of(width > height ? width : height)) {
        const TileFormatInfo info = tile_format();
        const std::uint32_t payload = info.tile_payload();
        std::uint64_t next_page = 0;
        tail_first_mip = mip_count;
        for (std::uint32_t mip = 0; mip < mip_count && mip < max_mips; ++mip) {
            MipLevel& level = mips[mip];
            level.width = level_size(width, mip);
            level.height = level_size(height, mip);
            level.tiles_x = (level.width + payload - 1) / payload;
            level.tiles_y = (level.height + payload - 1) / payload;
            if (level.tiles_x == 1 && level.tiles_y == 1 && tail_first_mip == mip_count) {
                tail_first_mip = mip;
            }
            if (mip >= tail_first_mip) continue;
            const bool by_tile = mip < shape.tile_levels;
            if (by_tile) tile_levels = mip + 1;
            level.page_tiles_x = by_tile ? 1 : info.page_tiles_x;
            level.page_tiles_y = by_tile ? 1 : info.page_tiles_y;
            level.pages_x = (level.tiles_x + level.page_tiles_x - 1) / level.page_tiles_x;
            level.pages_y = (level.tiles_y + level.page_tiles_y - 1) / level.page_tiles_y;
            level.first_page = next_page;
            next_page += std::uint64_t(level.pages_x) * level.pages_y;
        }
        for (std::uint32_t mip = tail_first_mip; mip < mip_count && mip < max_mips; ++mip) {
            mips[mip].first_page = next_page;  // all tail levels share the one tail page
        }
        page_count = next_page + 1;
    }
    // A square RGBA8 texture of 2^log2 texels on a side (log2 clamped to 20).
    VTPAGE_HOST_DEVICE constexpr explicit TextureLayout(std::uint32_t log2 = 0)
        : TextureLayout(TextureShape::square(log2 > max_size_log2 ? max_size_log2 : log2)) {}
    VTPAGE_HOST_DEVICE constexpr TextureLayout(std::uint32_t width_, std::uint32_t height_,
                                               TileFormat format_ = TileFormat::rgba8)
        : TextureLayout(TextureShape{width_, height_, format_}) {}

    VTPAGE_HOST_DEVICE static constexpr std::uint32_t clamp_size(std::uint32_t size) {
        return size < 1 ? 1 : size > max_size ? max_size : size;
    }
    // Levels down to 1 x 1: floor(log2(largest side)) + 1.
    VTPAGE_HOST_DEVICE static constexpr std::uint32_t mip_count_of(std::uint32_t largest) {
        std::uint32_t count = 1;
        while (largest > 1 && count < max_mips) {
            largest >>= 1;
            ++count;
        }
        return count;
    }
    VTPAGE_HOST_DEVICE static constexpr std::uint32_t level_size(std::uint32_t size,
                                                                 std::uint32_t mip) {
        const std::uint32_t shifted = mip >= 32 ? 0 : size >> mip;
        return shifted < 1 ? 1 : shifted;
    }

    VTPAGE_HOST_DEVICE constexpr TextureShape shape() const {
        return {width, height, format, stack, tile_levels};
    }
    // The shape of tiles and pages: the format's, or the stack's (records of the layers' blocks).
    VTPAGE_HOST_DEVICE constexpr TileFormatInfo tile_format() const {
        return stack.packed != 0 ? stack_tile_format_info(stack) : tile_format_info(format);
    }
    VTPAGE_HOST_DEVICE constexpr std::uint64_t tail_page() const { return page_count - 1; }
    VTPAGE_HOST_DEVICE constexpr bool in_tail(std::uint32_t mip) const {
        return mip >= tail_first_mip;
    }
    // Whether a page of this level is one tile.
    VTPAGE_HOST_DEVICE constexpr bool tile_level(std::uint32_t mip) const {
        return mip < tile_levels;
    }
    // Whether (mip, x, y) names a tile of this texture.
    VTPAGE_HOST_DEVICE constexpr bool has_tile(std::uint32_t mip, std::uint32_t x,
                                               std::uint32_t y) const {
        return mip < mip_count && x < mips[mip].tiles_x && y < mips[mip].tiles_y;
    }
    // The caller keeps has_tile(mip, x, y).
    VTPAGE_HOST_DEVICE constexpr TileLocation locate(std::uint32_t mip, std::uint32_t x,
                                                     std::uint32_t y) const {
        const TileFormatInfo info = tile_format();
        if (in_tail(mip)) return {tail_page(), mip - tail_first_mip, info.tile_bytes()};
        const MipLevel& level = mips[mip];
        const std::uint64_t page = level.first_page +
                                   std::uint64_t(y / level.page_tiles_y) * level.pages_x +
                                   x / level.page_tiles_x;
        return {page, (y % level.page_tiles_y) * level.page_tiles_x + x % level.page_tiles_x,
                info.tile_bytes()};
    }
    // The mip level a page belongs to.
    VTPAGE_HOST_DEVICE constexpr std::uint32_t mip_of_page(std::uint64_t page) const {
        for (std::uint32_t mip = 0; mip < tail_first_mip; ++mip) {
            const MipLevel& level = mips[mip];
            if (page < level.first_page + std::uint64_t(level.pages_x) * level.pages_y) return mip;
        }
        return tail_first_mip;
    }
    // The texels of the texture that a page holds (borders and padding not counted): what
    // keeping it resident is worth, whatever the format.
    VTPAGE_HOST_DEVICE constexpr std::uint64_t texels_in_page(std::uint64_t page) const {
        if (page >= tail_page()) {
            std::uint64_t texels = 0;
            for (std::uint32_t mip = tail_first_mip; mip < mip_count; ++mip) {
                texels += std::uint64_t(mips[mip].width) * mips[mip].height;
            }
            return page == tail_page() ? texels : 0;
        }
        const std::uint32_t mip = mip_of_page(page);
        const MipLevel& level = mips[mip];
        const std::uint64_t in_level = page - level.first_page;
        const TileFormatInfo info = tile_format();
        const std::uint64_t span_x = std::uint64_t(level.page_tiles_x) * info.tile_payload();
        const std::uint64_t span_y = std::uint64_t(level.page_tiles_y) * info.tile_payload();
        const std::uint64_t x0 = in_level % level.pages_x * span_x;
        const std::uint64_t y0 = in_level / level.pages_x * span_y;
        const std::uint64_t x1 = x0 + span_x < level.width ? x0 + span_x : level.width;
        const std::uint64_t y1 = y0 + span_y < level.height ? y0 + span_y : level.height;
        return (x1 - x0) * (y1 - y0);
    }
    // Mip 0 as a flat RGBA8 copy, in bytes: what a texture without paging would need.
    VTPAGE_HOST_DEVICE constexpr std::uint64_t flat_bytes() const {
        return std::uint64_t(width) * height * texel_bytes;
    }
};

// Byte offset of texel (tx, ty) of an RGBA8 tile (0..127 each, the border included).
VTPAGE_HOST_DEVICE constexpr std::uint32_t texel_offset(std::uint32_t tx, std::uint32_t ty) {
    return (ty * tile_size + tx) * texel_bytes;
}

// The texel of a mip level (one axis) that texel t (border included) of tile `tile` shows. Tile
// n's payload starts at level texel n * payload, so its border repeats the neighbours' texels; at
// the edge it clamps (tail levels are tile 0): address_texel(clamp_to_edge) of the same texel.
VTPAGE_HOST_DEVICE constexpr std::uint32_t level_texel(std::uint32_t tile, std::uint32_t t,
                                                       std::uint32_t level_size,
                                                       std::uint32_t payload = tile_payload,
                                                       std::uint32_t border = tile_border) {
    const std::int64_t texel = std::int64_t(tile) * payload + std::int64_t(t) - border;
    if (texel < 0) return 0;
    if (texel >= std::int64_t(level_size)) return level_size - 1;
    return std::uint32_t(texel);
}

// A page of a texture as a position in its mip level: page (x, y) of mip `mip` holds the tiles
// [x, x + 1) x [y, y + 1) pages of the format's page shape. The tail page is (0, 0) of
// tail_first_mip.
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

// The texel of level `to` (one axis) at the place of texel `texel` of level `from`: where the
// centre of that texel falls, floor((texel + 0.5) / from_size * to_size), in exact integers.
VTPAGE_HOST_DEVICE constexpr std::uint32_t place_texel(std::uint32_t texel, std::uint32_t from_size,
                                                       std::uint32_t to_size) {
    const std::uint64_t place =
        (2 * std::uint64_t(texel) + 1) * to_size / (2 * std::uint64_t(from_size));
    return place >= to_size ? to_size - 1 : std::uint32_t(place);
}

// The page of level `to` that covers the centre of texel (x, y) of level `from`: how the shaders
// find a coarser level for a place (tail levels give the tail page).
VTPAGE_HOST_DEVICE constexpr std::uint64_t covering_page(const TextureLayout& layout,
                                                         std::uint32_t from, std::uint32_t x,
                                                         std::uint32_t y, std::uint32_t to) {
    if (to >= layout.mip_count || layout.in_tail(to)) return layout.tail_page();
    const MipLevel& source = layout.mips[from];
    const MipLevel& target = layout.mips[to];
    const std::uint32_t payload = layout.tile_format().tile_payload();
    const std::uint32_t tx = place_texel(x, source.width, target.width) / payload;
    const std::uint32_t ty = place_texel(y, source.height, target.height) / payload;
    return layout.locate(to, tx, ty).page;
}

// The texel at the centre of what a page of a level covers (one axis), clamped to the level.
VTPAGE_HOST_DEVICE constexpr std::uint32_t page_centre_texel(std::uint32_t page_coordinate,
                                                             std::uint32_t tiles_per_page,
                                                             std::uint32_t payload,
                                                             std::uint32_t level_size) {
    const std::uint64_t first = std::uint64_t(page_coordinate) * tiles_per_page * payload;
    const std::uint64_t end = first + std::uint64_t(tiles_per_page) * payload;
    const std::uint64_t last = (end < level_size ? end : level_size) - 1;
    return std::uint32_t((first + last) / 2);
}

// The page of the next coarser mip that covers the centre of this page's area; the tail page is
// its own parent. At power-of-two sizes that is page (x / 2, y / 2) of the next level.
VTPAGE_HOST_DEVICE constexpr std::uint64_t parent_page(const TextureLayout& layout,
                                                       std::uint64_t page) {
    const PagePosition position = page_position(layout, page);
    if (layout.in_tail(position.mip) || position.mip + 1 >= layout.mip_count) {
        return layout.tail_page();
    }
    const TileFormatInfo info = layout.tile_format();
    const MipLevel& level = layout.mips[position.mip];
    const std::uint32_t x =
        page_centre_texel(position.x, level.page_tiles_x, info.tile_payload(), level.width);
    const std::uint32_t y =
        page_centre_texel(position.y, level.page_tiles_y, info.tile_payload(), level.height);
    return covering_page(layout, position.mip, x, y, position.mip + 1);
}

// Where a virtual page's bytes are among its source's pages (`source`: the layout of
// layout.shape().untiled()): a page of a tile level is one tile of a source page, any other page
// the source page of the same place, whole (tile_in_page 0).
VTPAGE_HOST_DEVICE constexpr TileLocation source_location(const TextureLayout& layout,
                                                          const TextureLayout& source,
                                                          std::uint64_t page) {
    const PagePosition position = page_position(layout, page);
    if (layout.tile_level(position.mip)) return source.locate(position.mip, position.x, position.y);
    return {page_at(source, position), 0, source.tile_format().tile_bytes()};
}

static_assert(TextureLayout(20).tail_first_mip == 14, "levels of 64 texels or less share the tail");
static_assert(TextureLayout(0).page_count == 1, "a 1 x 1 texture is just its tail");
static_assert(TextureLayout(5120, 2880).mip_count == 13, "Vulkan's chain: floor(log2 5120) + 1");
static_assert(TextureLayout(1u << 20, 17).mips[14].width == 64 &&
                  TextureLayout(1u << 20, 17).mips[14].height == 1,
              "each side halves down to 1 on its own");
static_assert(
    TextureLayout(TextureShape{1u << 15, 1u << 15, TileFormat::rgba8, {}, 1}).mips[1].first_page ==
        std::uint64_t(274) * 274,
    "mip 0 of 2^15 RGBA8 is 274 x 274 tiles, a page each");
static_assert(tile_payload % 2 == 0, "a tile lies inside one tile of the next coarser level");

}  // namespace vtpage::vt
