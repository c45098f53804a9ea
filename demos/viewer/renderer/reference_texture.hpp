// A virtual texture as an ordinary mip-mapped image: every level's texels (blocks, for the BC
// formats) read out of its source's tiles, borders dropped, in the layout vkCmdCopyBufferToImage
// takes. What a renderer has without vtpage (VulkanReferenceTextures uploads it), and the oracle
// vtpage's sampling is compared with: the same stored bytes, decoded and filtered by the device.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::viewer {

struct ReferenceLevel {
    std::uint32_t width = 0;  // texels
    std::uint32_t height = 0;
    std::vector<std::byte> bytes;  // rows of texels or of 4 x 4 blocks, top first
};

struct ReferenceTexture {
    VkFormat format = VK_FORMAT_UNDEFINED;
    vt::TextureSampling sampling;
    std::vector<ReferenceLevel> levels;  // level 0 first, down to 1 x 1
    std::uint64_t bytes() const;
};

// The Vulkan format of a tile format in a colour space (the *_SRGB variants decode before
// filtering, as an sRGB virtual texture does; BC1 is its RGB variant, as vtpage decodes it).
VkFormat reference_format(vt::TileFormat format, vt::ColorSpace color_space);

// Reads every page of `source` once (fill_host) and keeps each tile's payload. Errors from the
// source (io_error, corrupt_data) pass through.
ReferenceTexture read_reference_texture(const vt::TileSource& source);

}  // namespace vtpage::viewer
