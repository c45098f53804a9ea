#include "block_pattern_source.hpp"

#include <cstring>
#include <stdexcept>

namespace embedding {

namespace {

using vtpage::vt::TileFormat;

// A level's blocks per side: at least one (levels of 2 and 1 texels are inside one block).
std::int64_t level_blocks(std::uint32_t size, std::uint32_t mip) {
    const std::uint32_t texels = std::max<std::uint32_t>(1, size >> mip);
    return std::max<std::int64_t>(1, texels / 4);
}

std::int64_t wrap(std::int64_t index, std::int64_t count) {
    const std::int64_t r = index % count;
    return r < 0 ? r + count : r;
}

// RGB 5:6:5 and its expansion to 8 bits, as a BC1 decoder expands an endpoint.
std::uint16_t rgb565(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    return std::uint16_t((r >> 3) << 11 | (g >> 2) << 5 | (b >> 3));
}
std::array<std::uint8_t, 4> expand565(std::uint16_t c) {
    const std::uint32_t r = c >> 11 & 31, g = c >> 5 & 63, b = c & 31;
    return {std::uint8_t(r << 3 | r >> 2), std::uint8_t(g << 2 | g >> 4),
            std::uint8_t(b << 3 | b >> 2), 255};
}

// Checks of 8 x 8 blocks in two colours a level (the level shows in the hue), and stripes of a
// value for the single channel.
std::uint16_t colour_of(std::uint32_t mip, std::int64_t bx, std::int64_t by) {
    static const std::uint8_t palette[6][3] = {{230, 190, 120}, {120, 70, 40},   {150, 200, 230},
                                               {40, 80, 140},   {170, 220, 140}, {50, 110, 60}};
    const std::uint32_t pick = std::uint32_t((bx / 8 + by / 8) % 2) + 2 * (mip % 3);
    return rgb565(palette[pick][0], palette[pick][1], palette[pick][2]);
}
std::uint8_t channel_of(std::int64_t bx, std::int64_t by) {
    return std::uint8_t(64 + ((bx + 2 * by) % 12) * 16);
}

}  // namespace

BlockPatternSource::BlockPatternSource(TileFormat format, std::uint32_t size)
    : format_(format), size_(size) {
    if (format != TileFormat::bc1 && format != TileFormat::bc4)
        throw std::invalid_argument("the block pattern is bc1 or bc4");
    if (size < 4 || (size & (size - 1)) != 0)
        throw std::invalid_argument("the block pattern's size is a power of two >= 4");
}

vtpage::vt::TextureShape BlockPatternSource::shape() const noexcept {
    return {size_, size_, format_};
}

vtpage::vt::TextureSampling BlockPatternSource::sampling() const noexcept {
    using vtpage::vt::AddressMode;
    using vtpage::vt::ColorSpace;
    return {AddressMode::repeat, AddressMode::repeat,
            format_ == TileFormat::bc1 ? ColorSpace::srgb : ColorSpace::linear};
}

std::string BlockPatternSource::name() const {
    return format_ == TileFormat::bc1 ? "block pattern (bc1, sRGB)" : "block pattern (bc4)";
}

std::array<std::uint8_t, 4> BlockPatternSource::block_value(std::uint32_t mip, std::int64_t bx,
                                                            std::int64_t by) const {
    const std::int64_t blocks = level_blocks(size_, mip);
    bx = wrap(bx, blocks), by = wrap(by, blocks);
    if (format_ == TileFormat::bc1) return expand565(colour_of(mip, bx, by));
    const std::uint8_t v = channel_of(bx, by);
    return {v, 0, 0, 255};
}

void BlockPatternSource::fill_host(std::uint64_t page, std::span<std::byte> destination) const {
    using namespace vtpage::vt;
    const TextureLayout layout = this->layout();
    if (page >= layout.page_count || destination.size() < page_bytes)
        throw std::out_of_range("no such page of the block pattern");
    std::memset(destination.data(), 0, page_bytes);
    const TileFormatInfo info = layout.tile_format();
    const std::uint32_t row_blocks = info.blocks_per_row();  // 64: border blocks included
    const std::uint32_t payload_blocks = info.tile_payload() / 4;
    const PagePosition at = page_position(layout, page);
    const bool tail = layout.in_tail(at.mip);
    const std::uint32_t slots =
        tail ? layout.mip_count - layout.tail_first_mip : info.tiles_per_page();
    for (std::uint32_t slot = 0; slot < slots; ++slot) {
        const std::uint32_t mip = tail ? layout.tail_first_mip + slot : at.mip;
        const std::uint32_t tx = tail ? 0 : at.x * info.page_tiles_x + slot % info.page_tiles_x;
        const std::uint32_t ty = tail ? 0 : at.y * info.page_tiles_y + slot / info.page_tiles_x;
        if (!layout.has_tile(mip, tx, ty)) continue;
        std::byte* tile = destination.data() + std::size_t(slot) * info.tile_bytes();
        for (std::uint32_t y = 0; y < row_blocks; ++y) {
            for (std::uint32_t x = 0; x < row_blocks; ++x) {
                // Block x of the tile shows level block tile * payload + x - 1 (the border).
                const std::int64_t bx = std::int64_t(tx) * payload_blocks + x - 1;
                const std::int64_t by = std::int64_t(ty) * payload_blocks + y - 1;
                std::uint8_t block[8] = {};
                const std::int64_t blocks = level_blocks(size_, mip);
                if (format_ == TileFormat::bc1) {
                    // Both endpoints the colour, every index 0: the block is that colour.
                    const std::uint16_t c = colour_of(mip, wrap(bx, blocks), wrap(by, blocks));
                    block[0] = block[2] = std::uint8_t(c & 0xFF);
                    block[1] = block[3] = std::uint8_t(c >> 8);
                } else {
                    block[0] = block[1] = channel_of(wrap(bx, blocks), wrap(by, blocks));
                }
                std::memcpy(tile + (std::size_t(y) * row_blocks + x) * 8, block, 8);
            }
        }
    }
}

}  // namespace embedding
