// Material stacks: the textures a material samples with one uv (base colour, normal,
// metallic-roughness, occlusion) as the layers of one virtual texture, so that a sample of all of
// them costs one feedback entry, one indirection lookup and one resident page, and no pixel ever
// shows two levels of detail for two layers.
//
// The layers are block-compressed formats with the same tile (256 x 256, border 4, payload 248,
// 4 x 4 blocks), so a tile position means the same texels in every layer. A stack's tile stores,
// for each 4 x 4 block, a record of the layers' blocks one after the other (layer order, 8 bytes
// for BC1 / BC4, 16 for BC3 / BC5): a sample reads one record per texel footprint, not one tile
// per layer. A tile is 64 x 64 records; a page holds the largest power-of-two block of tiles that
// fits 2 MiB (wider than tall where it is not square):
//
//   layers                      record  tile      tiles / page  page fill
//   bc1                         8 B     32 KiB    8 x 8         100 %
//   bc1 + bc4, bc1 + bc1        16 B    64 KiB    8 x 4         100 %
//   bc1 + bc5 + bc1 (or bc4)    32 B    128 KiB   4 x 4         100 %
//   bc3 + bc5 + bc1             40 B    160 KiB   4 x 2         62.5 %
//   bc1 + bc5 + bc1 + bc4       40 B    160 KiB   4 x 2         62.5 %
//   bc3 + bc5 + bc3 + bc5       64 B    256 KiB   4 x 2         100 %
#pragma once

#include <cstdint>

#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::vt {

inline constexpr std::uint32_t max_stack_layers = 4;

// The formats of a stack's layers, packed so that the type stays trivially copyable and usable in
// CUDA: layer l's TileFormat + 1 in bits [4l, 4l + 4); 0 ends the list. Zero layers: not a stack.
struct TileStack {
    std::uint32_t packed = 0;

    VTPAGE_HOST_DEVICE static constexpr TileStack of(const TileFormat* formats,
                                                     std::uint32_t count) {
        TileStack stack;
        for (std::uint32_t l = 0; l < count && l < max_stack_layers; ++l) {
            stack.packed |= (std::uint32_t(formats[l]) + 1u) << (4u * l);
        }
        return stack;
    }
    VTPAGE_HOST_DEVICE constexpr std::uint32_t count() const {
        std::uint32_t n = 0;
        while (n < max_stack_layers && ((packed >> (4u * n)) & 0xFu) != 0) ++n;
        return n;
    }
    // The caller keeps l < count().
    VTPAGE_HOST_DEVICE constexpr TileFormat layer(std::uint32_t l) const {
        return TileFormat(((packed >> (4u * l)) & 0xFu) - 1u);
    }
    // The formats a layer may have: those of the 248-texel tile.
    VTPAGE_HOST_DEVICE static constexpr bool layer_format_allowed(TileFormat format) {
        return format == TileFormat::bc1 || format == TileFormat::bc3 ||
               format == TileFormat::bc4 || format == TileFormat::bc5;
    }
    // 1 .. 4 layers of allowed formats and nothing packed past the last one.
    VTPAGE_HOST_DEVICE constexpr bool valid() const {
        const std::uint32_t n = count();
        if (n == 0 || (n < max_stack_layers && (packed >> (4u * n)) != 0)) return false;
        for (std::uint32_t l = 0; l < n; ++l) {
            const std::uint32_t value = ((packed >> (4u * l)) & 0xFu) - 1u;
            if (!valid_tile_format(value) || !layer_format_allowed(TileFormat(value))) return false;
        }
        return true;
    }
    // Bytes of one record: the layers' blocks of one 4 x 4 block position.
    VTPAGE_HOST_DEVICE constexpr std::uint32_t record_bytes() const {
        std::uint32_t bytes = 0;
        for (std::uint32_t l = 0; l < count(); ++l) bytes += tile_format_info(layer(l)).block_bytes;
        return bytes;
    }
    // Where layer l's block starts in a record (a multiple of 8).
    VTPAGE_HOST_DEVICE constexpr std::uint32_t layer_offset(std::uint32_t l) const {
        std::uint32_t bytes = 0;
        for (std::uint32_t k = 0; k < l && k < count(); ++k) {
            bytes += tile_format_info(layer(k)).block_bytes;
        }
        return bytes;
    }
    VTPAGE_HOST_DEVICE friend constexpr bool operator==(TileStack a, TileStack b) {
        return a.packed == b.packed;
    }
    VTPAGE_HOST_DEVICE friend constexpr bool operator!=(TileStack a, TileStack b) {
        return a.packed != b.packed;
    }
};

// The tile and page shape of a valid stack: the layers' tile, records as blocks, and the largest
// power-of-two block of tiles that fits a page (page_tiles_x >= page_tiles_y).
VTPAGE_HOST_DEVICE constexpr TileFormatInfo stack_tile_format_info(TileStack stack) {
    TileFormatInfo info = tile_format_info(TileFormat::bc1);
    info.block_bytes = stack.record_bytes();
    info.channels = 0;
    for (std::uint32_t l = 0; l < stack.count(); ++l) {
        info.channels += tile_format_info(stack.layer(l)).channels;
    }
    std::uint32_t tiles = 1;
    while (info.tile_bytes() != 0 &&
           std::uint64_t(tiles) * 2 * info.tile_bytes() <= format_page_bytes && tiles < 64) {
        tiles *= 2;
    }
    std::uint32_t log2 = 0;
    while ((1u << log2) < tiles) ++log2;
    info.page_tiles_x = 1u << ((log2 + 1) / 2);
    info.page_tiles_y = tiles / info.page_tiles_x;
    return info;
}

// The share of a page that a stack's tiles use, in percent (100 where they fill it).
constexpr double stack_page_fill_percent(TileStack stack) {
    const TileFormatInfo info = stack_tile_format_info(stack);
    return 100.0 * double(info.tile_bytes()) * info.tiles_per_page() / double(format_page_bytes);
}

namespace tile_stack_checks {
constexpr TileStack stack_of(TileFormat a, TileFormat b = TileFormat(0xF),
                             TileFormat c = TileFormat(0xF), TileFormat d = TileFormat(0xF)) {
    const TileFormat all[] = {a, b, c, d};
    std::uint32_t n = 1;
    while (n < 4 && all[n] != TileFormat(0xF)) ++n;
    return TileStack::of(all, n);
}
constexpr bool grid_is(TileStack stack, std::uint32_t x, std::uint32_t y) {
    const TileFormatInfo info = stack_tile_format_info(stack);
    return info.page_tiles_x == x && info.page_tiles_y == y &&
           std::uint64_t(info.tile_bytes()) * info.tiles_per_page() <= format_page_bytes;
}
}  // namespace tile_stack_checks
static_assert(
    tile_stack_checks::grid_is(tile_stack_checks::stack_of(TileFormat::bc1), 8, 8) &&
        tile_stack_checks::grid_is(tile_stack_checks::stack_of(TileFormat::bc1, TileFormat::bc4), 8,
                                   4) &&
        tile_stack_checks::grid_is(tile_stack_checks::stack_of(TileFormat::bc1, TileFormat::bc5,
                                                               TileFormat::bc1),
                                   4, 4) &&
        tile_stack_checks::grid_is(tile_stack_checks::stack_of(TileFormat::bc1, TileFormat::bc5,
                                                               TileFormat::bc1, TileFormat::bc4),
                                   4, 2),
    "the page grids of the table above");

}  // namespace vtpage::vt
