// The descriptor of a baked texture of versions 2 and 3: what a page archive (page_archive.hpp)
// holds to say which texture its pages are. A fixed 64-byte little-endian struct; every field
// has one right value given the others and the archive's shape (or one of a few, checked), so
// that a descriptor rewritten with a fresh checksum cannot say what the pages are not.
//
//   offset  bytes  field          what
//   0       8      magic          "VTPGTEX2" in a version-2 archive, "VTPGTEX3" in version 3
//   8       4      width          texels of mip 0, 1 .. 2^20
//   12      4      height         texels of mip 0, 1 .. 2^20
//   16      4      format         TileFormat (0 rgba8, 1 bc1, 2 bc3, 3 bc4, 4 bc5)
//   20      4      source_width   the image's width: equal to width (nothing is padded)
//   24      4      source_height  the image's height: equal to height
//   28      4      source_bits    bits per sample of the image file: 8, 16, 32 or 64
//   32      4      mip_count      Vulkan's chain down to 1 x 1: TextureLayout's mip_count
//   36      4      reserved0      zero
//   40      8      page_count     TextureLayout(shape).page_count, and the archive's
//   48      4      address_u      version 3: AddressMode along u (0 clamp_to_edge, 1 repeat,
//                                 2 mirrored_repeat); version 2: zero (clamp_to_edge)
//   52      4      address_v      version 3: AddressMode along v; version 2: zero
//   56      4      color_space    version 3: ColorSpace (0 linear, 1 srgb; srgb only for rgba8,
//                                 bc1 and bc3); version 2: zero (linear)
//   60      4      reserved1      zero
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vtpage::vt {

// The descriptor's magic in archives of version 3 (what writers write) and of version 2.
inline constexpr char baked_texture_descriptor_magic[8] = {'V', 'T', 'P', 'G', 'T', 'E', 'X', '3'};
inline constexpr char baked_texture_descriptor_magic_v2[8] = {'V', 'T', 'P', 'G',
                                                              'T', 'E', 'X', '2'};

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
    std::uint32_t address_u = 0;    // AddressMode
    std::uint32_t address_v = 0;    // AddressMode
    std::uint32_t color_space = 0;  // ColorSpace
    std::uint32_t reserved1 = 0;

    // The three fields above, as the texture's sampling (the defaults in version 2).
    TextureSampling sampling() const noexcept {
        return {AddressMode(address_u), AddressMode(address_v), ColorSpace(color_space)};
    }
};
static_assert(sizeof(BakedTextureDescriptor) == 64, "the descriptor is 64 bytes on disk");

// The descriptor (version 3) of a texture of this shape baked from an image of source_bits per
// sample, to be sampled as `sampling` says. invalid_argument for a shape that is not valid(),
// bits that are not 8, 16, 32 or 64, an address mode or colour space that is not one of the
// enums', or sRGB for a format without it (bc4, bc5: the message says so).
BakedTextureDescriptor make_baked_texture_descriptor(TextureShape shape, std::uint32_t source_bits,
                                                     TextureSampling sampling = {});

// The page archive's shape for a texture: its page count and its format's tile and page sizes.
PageArchiveShape baked_archive_shape(TextureShape shape);

// Reads and checks a descriptor against the archive's shape and version (2 wants "VTPGTEX2"
// and zero sampling fields, 3 "VTPGTEX3" and valid ones): corrupt_data naming the field (its
// value and what was expected) for any that is wrong, sRGB on bc4 or bc5 included; `path` goes
// into the message.
BakedTextureDescriptor check_baked_texture_descriptor(std::span<const std::byte> bytes,
                                                      const PageArchiveShape& archive,
                                                      std::uint32_t archive_version,
                                                      const std::string& path);

}  // namespace vtpage::vt
