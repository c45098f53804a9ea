#include "reference_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

namespace embedding {

namespace {

using namespace vtpage::vt;

// The four bytes of texel (x, y) of level `mip`, from the page that holds its tile.
const std::byte* texel(const TileSource& source, std::uint32_t mip, std::uint32_t x,
                       std::uint32_t y, std::map<std::uint64_t, std::vector<std::byte>>& pages) {
    const TextureLayout layout = source.layout();
    const TileLocation tile = layout.locate(mip, x / tile_payload, y / tile_payload);
    std::vector<std::byte>& page = pages[tile.page];
    if (page.empty()) {
        page.resize(page_bytes);
        source.fill_host(tile.page, page);
    }
    const std::uint32_t tx = x % tile_payload + tile_border, ty = y % tile_payload + tile_border;
    return page.data() + tile.byte_offset() + texel_offset(tx, ty);
}

}  // namespace

int largest_difference(const TileSource& source, std::uint32_t mip, const std::uint8_t* image,
                       std::uint32_t size) {
    std::map<std::uint64_t, std::vector<std::byte>> pages;
    int largest = 0;
    for (std::uint32_t y = 0; y < size; ++y) {
        for (std::uint32_t x = 0; x < size; ++x) {
            const std::byte* expected = texel(source, mip, x, y, pages);
            const std::uint8_t* seen = image + (std::size_t(y) * size + x) * 4;
            for (int c = 0; c < 4; ++c) {
                largest = std::max(largest, std::abs(int(seen[c]) - int(expected[c])));
            }
        }
    }
    return largest;
}

int largest_stack_difference(const BlockPatternSource& colour, const BlockPatternSource& channel,
                             std::uint32_t mip, std::uint32_t offset, const std::uint8_t* image,
                             std::uint32_t size) {
    int largest = 0;
    for (std::uint32_t y = 0; y < size; ++y) {
        for (std::uint32_t x = 0; x < size; ++x) {
            const std::int64_t bx = (x + offset) / 4, by = (y + offset) / 4;
            const auto rgb = colour.block_value(mip, bx, by);
            const std::uint8_t expected[4] = {rgb[0], rgb[1], rgb[2],
                                              channel.block_value(mip, bx, by)[0]};
            const std::uint8_t* seen = image + (std::size_t(y) * size + x) * 4;
            for (int c = 0; c < 4; ++c) {
                largest = std::max(largest, std::abs(int(seen[c]) - int(expected[c])));
            }
        }
    }
    return largest;
}

void write_ppm(const std::string& path, const std::uint8_t* image, std::uint32_t size) {
    std::ofstream out(path, std::ios::binary);
    out << "P6\n" << size << " " << size << "\n255\n";
    for (std::size_t i = 0; i < std::size_t(size) * size; ++i) {
        out.write(reinterpret_cast<const char*>(image + i * 4), 3);
    }
    if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace embedding
