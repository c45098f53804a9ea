// The descriptor of a baked texture of version 2: what a page archive (page_archive.hpp) holds
// to say which texture its pages are. A fixed 64-byte little-endian struct; every field has one
// right value given the others and the archive's shape, so that a descriptor rewritten with a
// fresh checksum cannot say what the pages are not.
//
//   offset  bytes  field          what
//   0       8      magic          "VTPGTEX2"
//   8       4      width          texels of mip 0, 1 .. 2^20
//   12      4      height         texels of mip 0, 1 .. 2^20
//   16      4      format         TileFormat (0 rgba8, 1 bc1, 2 bc3, 3 bc4, 4 bc5)
//   20      4      source_width   the image's width: equal to width (nothing is padded)
//   24      4      source_height  the image's height: equal to height
//   28      4      source_bits    bits per sample of the image file: 8, 16, 32 or 64
//   32      4      mip_count      Vulkan's chain down to 1 x 1: TextureLayout's mip_count
//   36      4      reserved0      zero
//   40      8      page_count     TextureLayout(shape).page_count, and the archive's
//   48      16     reserved       zero
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt {

inline constexpr char baked_texture_descriptor_magic[8] = {'V', 'T', 'P', 'G', 'T', 'E', 'X', '2'};

struct BakedTextureDescriptor {
    char magic[8] = {};
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint32_t format = 0;
    std::uint32_t source_width = 0;
    std::uint32_t source_height = 0;
    std::uint32_t source_bits = 0;
    std::uint32_t mip_count = 0;
    std::uint32_t reserved0 = 0;
    std::uint64_t page_count = 0;
    std::uint8_t reserved[16] = {};
};
static_assert(sizeof(BakedTextureDescriptor) == 64, "the descriptor is 64 bytes on disk");

// The descriptor of a texture of this shape baked from an image of source_bits per sample.
// invalid_argument for a shape that is not valid() or bits that are not 8, 16, 32 or 64.
BakedTextureDescriptor make_baked_texture_descriptor(TextureShape shape, std::uint32_t source_bits);

// The page archive's shape for a texture: its page count and its format's tile and page sizes.
PageArchiveShape baked_archive_shape(TextureShape shape);

// Reads and checks a descriptor against the archive's shape: corrupt_data naming the field
// (its value and what was expected) for any that is wrong; `path` goes into the message.
BakedTextureDescriptor check_baked_texture_descriptor(std::span<const std::byte> bytes,
                                                      const PageArchiveShape& archive,
                                                      const std::string& path);

}  // namespace vtpage::vt
