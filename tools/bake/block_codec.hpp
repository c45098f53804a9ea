// Tiles of RGBA8 texels to and from the stored bytes of a tile format. The block-compressed
// formats go through libsquish, both ways: its encoder makes the baked tiles, and its decoder
// is the reference that the shaders' decoder and the device encoder are checked against.
//
// A tile is tile_size x tile_size texels (tile_format.hpp), given as rows of RGBA8. Its bytes
// hold the 4 x 4 blocks row by row: block (bx, by) at (by * blocks_per_row + bx) * block_bytes.
// What a format keeps of a texel:
//
//   rgba8  all four channels, copied
//   bc1    red, green, blue (alpha is ignored; decoded as 255)
//   bc3    all four channels
//   bc4    red (decoded as (r, 0, 0, 255))
//   bc5    red and green (decoded as (r, g, 0, 255))
//
// Both functions keep no state: any number of threads may call them at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::bake {

enum class EncodeQuality {
    fast,  // libsquish's range fit: the endpoints from the colours' extent
    good,  // libsquish's cluster fit: a search over the orderings of the block's colours
};

// Encodes one tile. invalid_argument for a format that is not a TileFormat, `rgba` that is not
// tile_size^2 * 4 bytes or `out` that is not tile_bytes() long.
void encode_tile(vt::TileFormat format, std::span<const std::uint8_t> rgba,
                 std::span<std::byte> out, EncodeQuality quality = EncodeQuality::good);

// Decodes one tile into rows of RGBA8. invalid_argument as for encode_tile, with `tile` of
// tile_bytes() and `rgba_out` of tile_size^2 * 4 bytes.
void decode_tile(vt::TileFormat format, std::span<const std::byte> tile,
                 std::span<std::uint8_t> rgba_out);

}  // namespace vtpage::bake
