#include "renderer/reference_texture.hpp"

#include <algorithm>
#include <cstring>
#include <span>

namespace vtpage::viewer {

namespace {

using vt::TextureLayout;
using vt::TileFormatInfo;

// Units a level is stored in: texels, or 4 x 4 blocks.
std::uint32_t units(std::uint32_t texels, const TileFormatInfo& info) {
    return (texels + info.block_size - 1) / info.block_size;
}

ReferenceLevel empty_level(const TextureLayout& layout, std::uint32_t mip) {
    const TileFormatInfo info = layout.tile_format();
    ReferenceLevel level;
    level.width = layout.mips[mip].width;
    level.height = layout.mips[mip].height;
    level.bytes.resize(std::size_t(units(level.width, info)) * units(level.height, info) *
                       info.block_bytes);
    return level;
}

// Tile (x, y)'s payload (its stored bytes at `tile`) into the level's rows, clipped to it.
void copy_payload(const TileFormatInfo& info, std::span<const std::byte> tile, std::uint32_t x,
                  std::uint32_t y, ReferenceLevel& level) {
    const std::uint32_t border = info.tile_border / info.block_size;
    const std::uint32_t payload = info.tile_payload() / info.block_size;
    const std::uint32_t level_x = units(level.width, info), level_y = units(level.height, info);
    const std::uint32_t first_x = x * payload, first_y = y * payload;
    const std::uint32_t columns = std::min(payload, level_x - first_x);
    const std::uint32_t rows = std::min(payload, level_y - first_y);
    for (std::uint32_t row = 0; row < rows; ++row) {
        const std::size_t from =
            (std::size_t(row + border) * info.blocks_per_row() + border) * info.block_bytes;
        const std::size_t to = (std::size_t(first_y + row) * level_x + first_x) * info.block_bytes;
        std::memcpy(level.bytes.data() + to, tile.data() + from,
                    std::size_t(columns) * info.block_bytes);
    }
}

}  // namespace

std::uint64_t ReferenceTexture::bytes() const {
    std::uint64_t total = 0;
    for (const ReferenceLevel& level : levels) total += level.bytes.size();
    return total;
}

VkFormat reference_format(vt::TileFormat format, vt::ColorSpace color_space) {
    const bool srgb = color_space == vt::ColorSpace::srgb;
    switch (format) {
        case vt::TileFormat::bc1:
            return srgb ? VK_FORMAT_BC1_RGB_SRGB_BLOCK : VK_FORMAT_BC1_RGB_UNORM_BLOCK;
        case vt::TileFormat::bc3:
            return srgb ? VK_FORMAT_BC3_SRGB_BLOCK : VK_FORMAT_BC3_UNORM_BLOCK;
        case vt::TileFormat::bc4:
            return VK_FORMAT_BC4_UNORM_BLOCK;
        case vt::TileFormat::bc5:
            return VK_FORMAT_BC5_UNORM_BLOCK;
        case vt::TileFormat::rgba8:
            break;
    }
    return srgb ? VK_FORMAT_R8G8B8A8_SRGB : VK_FORMAT_R8G8B8A8_UNORM;
}

ReferenceTexture read_reference_texture(const vt::TileSource& source) {
    const TextureLayout layout = source.layout();
    const TileFormatInfo info = layout.tile_format();
    ReferenceTexture texture;
    texture.sampling = source.sampling();
    texture.format = reference_format(layout.format, texture.sampling.color_space);
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        texture.levels.push_back(empty_level(layout, mip));
    }
    // Each page read once, its tiles copied out as they are found.
    std::vector<std::byte> page(vt::format_page_bytes);
    std::uint64_t loaded = ~std::uint64_t{0};
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        const vt::MipLevel& level = layout.mips[mip];
        // Page by page, so that a level is read in page order.
        for (std::uint32_t page_y = 0; page_y * info.page_tiles_y < level.tiles_y; ++page_y) {
            for (std::uint32_t page_x = 0; page_x * info.page_tiles_x < level.tiles_x; ++page_x) {
                for (std::uint32_t ty = page_y * info.page_tiles_y;
                     ty < std::min(level.tiles_y, (page_y + 1) * info.page_tiles_y); ++ty) {
                    for (std::uint32_t tx = page_x * info.page_tiles_x;
                         tx < std::min(level.tiles_x, (page_x + 1) * info.page_tiles_x); ++tx) {
                        const vt::TileLocation where = layout.locate(mip, tx, ty);
                        if (where.page != loaded) {
                            source.fill_host(where.page, page);
                            loaded = where.page;
                        }
                        copy_payload(
                            info, std::span(page).subspan(where.byte_offset(), info.tile_bytes()),
                            tx, ty, texture.levels[mip]);
                    }
                }
            }
        }
    }
    return texture;
}

}  // namespace vtpage::viewer
