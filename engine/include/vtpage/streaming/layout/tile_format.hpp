// The formats a tile of a virtual texture can be stored in, and the shape each one gives tiles and
// pages. One header for C++, CUDA and (through the generated constants) GLSL.
//
// Every format keeps a 4-texel border around a tile's payload, so that bilinear filtering never
// leaves a tile; for the block-compressed formats that border is exactly one 4 x 4 block. A page
// is always 2 MiB: the formats differ in how many tiles it holds, and so in texels per page.
//
//   format  channels  bytes / texel  tile (border incl.)  tile bytes  tiles / page  texels / page
//   rgba8   RGBA      4              128 x 128            64 KiB      8 x 4         460,800
//   bc1     RGB       0.5            256 x 256            32 KiB      8 x 8         3,936,256
//   bc3     RGBA      1              256 x 256            64 KiB      8 x 4         1,968,128
//   bc4     R         0.5            256 x 256            32 KiB      8 x 8         3,936,256
//   bc5     RG        1              256 x 256            64 KiB      8 x 4         1,968,128
//
// (texels / page counts payload only: 32 x 120^2 for rgba8, 64 x 248^2 for bc1.)
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VTPAGE_HOST_DEVICE __host__ __device__
#else
#define VTPAGE_HOST_DEVICE
#endif

namespace vtpage::vt {

enum class TileFormat : std::uint32_t {
    rgba8 = 0,  // 8-bit RGBA, uncompressed
    bc1 = 1,    // RGB, 4 bits per texel (BC1 / DXT1 without alpha)
    bc3 = 2,    // RGBA, 8 bits per texel (BC3 / DXT5)
    bc4 = 3,    // one channel, 4 bits per texel (heights, masks)
    bc5 = 4,    // two channels, 8 bits per texel (normal maps)
};
inline constexpr std::uint32_t tile_format_count = 5;

inline constexpr std::uint64_t format_page_bytes = 2ull * 1024u * 1024u;

// The shape a format gives tiles and pages.
struct TileFormatInfo {
    std::uint32_t tile_size = 0;    // texels per side, border included
    std::uint32_t tile_border = 0;  // texels of border on each side
    std::uint32_t block_size = 0;   // texels per side of one block (1: uncompressed)
    std::uint32_t block_bytes = 0;  // bytes of one block (of one texel when uncompressed)
    std::uint32_t page_tiles_x = 0;
    std::uint32_t page_tiles_y = 0;
    std::uint32_t channels = 0;

    VTPAGE_HOST_DEVICE constexpr std::uint32_t tile_payload() const {
        return tile_size - 2 * tile_border;
    }
    VTPAGE_HOST_DEVICE constexpr std::uint32_t blocks_per_row() const {
        return tile_size / block_size;
    }
    VTPAGE_HOST_DEVICE constexpr std::uint32_t tile_bytes() const {
        return blocks_per_row() * blocks_per_row() * block_bytes;
    }
    VTPAGE_HOST_DEVICE constexpr std::uint32_t tiles_per_page() const {
        return page_tiles_x * page_tiles_y;
    }
    VTPAGE_HOST_DEVICE constexpr bool compressed() const { return block_size > 1; }
};

VTPAGE_HOST_DEVICE constexpr TileFormatInfo tile_format_info(TileFormat format) {
    switch (format) {
        case TileFormat::bc1:
            return {256, 4, 4, 8, 8, 8, 3};
        case TileFormat::bc3:
            return {256, 4, 4, 16, 8, 4, 4};
        case TileFormat::bc4:
            return {256, 4, 4, 8, 8, 8, 1};
        case TileFormat::bc5:
            return {256, 4, 4, 16, 8, 4, 2};
        case TileFormat::rgba8:
        default:
            return {128, 4, 1, 4, 8, 4, 4};
    }
}

VTPAGE_HOST_DEVICE constexpr bool valid_tile_format(std::uint32_t value) {
    return value < tile_format_count;
}

// The name used in flags, file listings and messages: "rgba8", "bc1", ...
constexpr const char* tile_format_name(TileFormat format) {
    switch (format) {
        case TileFormat::rgba8:
            return "rgba8";
        case TileFormat::bc1:
            return "bc1";
        case TileFormat::bc3:
            return "bc3";
        case TileFormat::bc4:
            return "bc4";
        case TileFormat::bc5:
            return "bc5";
    }
    return "unknown";
}

namespace tile_format_checks {
constexpr bool fills_a_page(TileFormat format) {
    const TileFormatInfo info = tile_format_info(format);
    return std::uint64_t(info.tile_bytes()) * info.tiles_per_page() == format_page_bytes &&
           info.tile_border % info.block_size == 0 && info.tile_size % info.block_size == 0 &&
           info.tile_payload() % 2 == 0 &&
           // The shader divides by these two payloads as constants (vt_div_payload) and
           // addresses tiles in a page with shifts.
           (info.tile_payload() == 120 || info.tile_payload() == 248) &&
           (info.page_tiles_x & (info.page_tiles_x - 1)) == 0 &&
           (info.page_tiles_y & (info.page_tiles_y - 1)) == 0;
}
}  // namespace tile_format_checks
static_assert(tile_format_checks::fills_a_page(TileFormat::rgba8) &&
                  tile_format_checks::fills_a_page(TileFormat::bc1) &&
                  tile_format_checks::fills_a_page(TileFormat::bc3) &&
                  tile_format_checks::fills_a_page(TileFormat::bc4) &&
                  tile_format_checks::fills_a_page(TileFormat::bc5),
              "every format fills a 2 MiB page with whole tiles, borders of whole blocks");

}  // namespace vtpage::vt
