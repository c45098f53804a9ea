// What the example's --check and --out use: the texels of a tile source's mip level read
// straight from its pages (the reference a settled image must match), and a PPM writer.
#pragma once

#include <cstdint>
#include <string>

#include "block_pattern_source.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"

namespace embedding {

// The same for --stack: pixel (x, y) shows texel (x + offset, y + offset) of level `mip`,
// wrapped: the colour layer's RGB and the channel layer's value in alpha.
int largest_stack_difference(const BlockPatternSource& colour, const BlockPatternSource& channel,
                             std::uint32_t mip, std::uint32_t offset, const std::uint8_t* image,
                             std::uint32_t size);

// The largest difference (0..255, any channel) between a size x size RGBA8 image and texels
// [0, size)^2 of level `mip` of `source`, filled on the host page by page.
int largest_difference(const vtpage::vt::TileSource& source, std::uint32_t mip,
                       const std::uint8_t* image, std::uint32_t size);

// Writes a size x size RGBA8 image as a binary PPM (RGB); throws std::runtime_error.
void write_ppm(const std::string& path, const std::uint8_t* image, std::uint32_t size);

}  // namespace embedding
