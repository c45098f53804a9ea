#include "block_codec.hpp"

#include <squish.h>

#include <array>
#include <cstring>

#include "vtpage/base/error.hpp"

namespace vtpage::bake {

namespace {

constexpr std::uint32_t block_texels = 16;  // 4 x 4
using BlockTexels = std::array<std::uint8_t, std::size_t{block_texels} * 4>;

vt::TileFormatInfo checked_format(vt::TileFormat format, const char* operation) {
    if (!vt::valid_tile_format(static_cast<std::uint32_t>(format))) {
        throw Error(Errc::invalid_argument, operation,
                    detail::concat("tile format ", static_cast<std::uint32_t>(format),
                                   " is not one of rgba8, bc1, bc3, bc4, bc5"));
    }
    return vt::tile_format_info(format);
}

void check_size(std::size_t actual, std::size_t expected, const char* operation, const char* what,
                vt::TileFormat format) {
    if (actual != expected) {
        throw Error(Errc::invalid_argument, operation,
                    detail::concat(what, " is ", actual, " bytes; a ", vt::tile_format_name(format),
                                   " tile needs ", expected));
    }
}

std::size_t rgba_bytes(const vt::TileFormatInfo& info) {
    return std::size_t(info.tile_size) * info.tile_size * 4;
}

// libsquish reads its one-channel formats from red (BC4) or red and green (BC5); BC1 is asked to
// keep no alpha, so that texels with low alpha do not turn into its transparent black.
int squish_flags(vt::TileFormat format, EncodeQuality quality) {
    const int fit =
        quality == EncodeQuality::fast ? squish::kColourRangeFit : squish::kColourClusterFit;
    switch (format) {
        case vt::TileFormat::bc1:
            return squish::kDxt1 | fit;
        case vt::TileFormat::bc3:
            return squish::kDxt5 | fit;
        case vt::TileFormat::bc4:
            return squish::kBc4;
        case vt::TileFormat::bc5:
        default:
            return squish::kBc5;
    }
}

BlockTexels gather_block(std::span<const std::uint8_t> rgba, std::uint32_t tile_size,
                         std::uint32_t bx, std::uint32_t by) {
    BlockTexels texels;
    for (std::size_t y = 0; y < 4; ++y) {
        const std::size_t row = (std::size_t(by) * 4 + y) * tile_size + std::size_t(bx) * 4;
        std::memcpy(&texels[y * 16], &rgba[row * 4], 16);
    }
    return texels;
}

void scatter_block(const BlockTexels& texels, std::span<std::uint8_t> rgba, std::uint32_t tile_size,
                   std::uint32_t bx, std::uint32_t by) {
    for (std::size_t y = 0; y < 4; ++y) {
        const std::size_t row = (std::size_t(by) * 4 + y) * tile_size + std::size_t(bx) * 4;
        std::memcpy(&rgba[row * 4], &texels[y * 16], 16);
    }
}

// libsquish 1.15 decodes kBc4 and kBc5 as if they were BC1. A BC4 block is laid out as BC3's
// alpha block, so its own BC3 decoder reads it: `channel` of each texel gets the decoded alpha.
void decode_bc4_channel(const std::byte* bc4_block, BlockTexels& texels, int channel) {
    std::array<std::byte, 16> bc3_block{};
    std::memcpy(bc3_block.data(), bc4_block, 8);
    BlockTexels decoded;
    squish::Decompress(decoded.data(), bc3_block.data(), squish::kDxt5);
    for (std::uint32_t i = 0; i < block_texels; ++i) texels[i * 4 + channel] = decoded[i * 4 + 3];
}

void decode_block(vt::TileFormat format, const std::byte* block, BlockTexels& texels) {
    switch (format) {
        case vt::TileFormat::bc1:
            squish::Decompress(texels.data(), block, squish::kDxt1);
            for (std::uint32_t i = 0; i < block_texels; ++i) texels[i * 4 + 3] = 255;
            return;
        case vt::TileFormat::bc3:
            squish::Decompress(texels.data(), block, squish::kDxt5);
            return;
        case vt::TileFormat::bc4:
        case vt::TileFormat::bc5:
        default:
            for (std::uint32_t i = 0; i < block_texels; ++i) {
                texels[i * 4 + 0] = 0;
                texels[i * 4 + 1] = 0;
                texels[i * 4 + 2] = 0;
                texels[i * 4 + 3] = 255;
            }
            decode_bc4_channel(block, texels, 0);
            if (format == vt::TileFormat::bc5) decode_bc4_channel(block + 8, texels, 1);
            return;
    }
}

}  // namespace

void encode_tile(vt::TileFormat format, std::span<const std::uint8_t> rgba,
                 std::span<std::byte> out, EncodeQuality quality) {
    constexpr const char* operation = "encode_tile";
    const vt::TileFormatInfo info = checked_format(format, operation);
    check_size(rgba.size(), rgba_bytes(info), operation, "the RGBA8 input", format);
    check_size(out.size(), info.tile_bytes(), operation, "the output", format);
    if (!info.compressed()) {
        std::memcpy(out.data(), rgba.data(), out.size());
        return;
    }
    const int flags = squish_flags(format, quality);
    const std::uint32_t blocks = info.blocks_per_row();
    for (std::uint32_t by = 0; by < blocks; ++by) {
        for (std::uint32_t bx = 0; bx < blocks; ++bx) {
            BlockTexels texels = gather_block(rgba, info.tile_size, bx, by);
            if (format == vt::TileFormat::bc1) {
                for (std::uint32_t i = 0; i < block_texels; ++i) texels[i * 4 + 3] = 255;
            }
            std::byte* block = &out[(std::size_t(by) * blocks + bx) * info.block_bytes];
            squish::Compress(texels.data(), block, flags);
        }
    }
}

void decode_tile(vt::TileFormat format, std::span<const std::byte> tile,
                 std::span<std::uint8_t> rgba_out) {
    constexpr const char* operation = "decode_tile";
    const vt::TileFormatInfo info = checked_format(format, operation);
    check_size(tile.size(), info.tile_bytes(), operation, "the tile", format);
    check_size(rgba_out.size(), rgba_bytes(info), operation, "the RGBA8 output", format);
    if (!info.compressed()) {
        std::memcpy(rgba_out.data(), tile.data(), tile.size());
        return;
    }
    const std::uint32_t blocks = info.blocks_per_row();
    for (std::uint32_t by = 0; by < blocks; ++by) {
        for (std::uint32_t bx = 0; bx < blocks; ++bx) {
            BlockTexels texels;
            decode_block(format, &tile[(std::size_t(by) * blocks + bx) * info.block_bytes], texels);
            scatter_block(texels, rgba_out, info.tile_size, bx, by);
        }
    }
}

}  // namespace vtpage::bake
