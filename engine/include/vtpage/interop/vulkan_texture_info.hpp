// How the shaders see one virtual texture: where its pages start in the page table's address
// space and where each mip level's pages are, computed on the CPU from TextureLayout so that the
// shader never recomputes the layout. The GLSL struct VtTextureInfo (shaders/vtpage/
// virtual_texture.glsl) has the same std430 layout; its size is generated from this header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vtpage {

struct VulkanTextureInfo {
    std::uint32_t base_page = 0;  // global page index of the texture's first page
    std::uint32_t width = 0;      // texels of mip 0
    std::uint32_t height = 0;
    std::uint32_t mip_count = 0;
    std::uint32_t tail_first_mip = 0;
    std::uint32_t format = 0;  // vt::TileFormat
    // The format's tile and page shape (vt::TileFormatInfo), so that the shader reads them once.
    std::uint32_t tile_size = 0;
    std::uint32_t tile_border = 0;
    std::uint32_t tile_payload = 0;
    std::uint32_t tile_bytes = 0;
    std::uint32_t page_tiles_x = 0;
    std::uint32_t page_tiles_y = 0;
    // vt::TextureSampling: how u and v wrap (vt::AddressMode) and whether texels are decoded
    // from sRGB before filtering (vt::ColorSpace).
    std::uint32_t address_u = 0;
    std::uint32_t address_v = 0;
    std::uint32_t color_space = 0;
    // The layers a tile's block records hold (tile_stack.hpp): a plain texture is one layer
    // whose record is one block (one texel in RGBA8). Formats and record offsets 8 bits a layer,
    // layer l in bits [8l, 8l + 8); sRGB layers as bits.
    std::uint32_t layer_count = 1;
    std::uint32_t record_bytes = 0;
    std::uint32_t layer_formats = 0;
    std::uint32_t layer_offsets = 0;
    std::uint32_t srgb_layers = 0;
    // Levels [0, tile_levels) hold a tile a page (vt::TextureShape::tile_levels): there a page
    // is 1 x 1 tiles, not page_tiles_x x page_tiles_y.
    std::uint32_t tile_levels = 0;
    std::uint32_t mip_first_page[vt::max_mips] = {};  // relative to base_page; the tail page
                                                      // for every level in the tail
    std::uint32_t mip_pages_x[vt::max_mips] = {};

    // Page indices are 32-bit in the shaders: 2^32 pages of 2 MiB is 8 PiB, far beyond any
    // reservation (a process has 128 TiB of address space).
    static constexpr VulkanTextureInfo make(std::uint32_t base_page, vt::TextureShape shape,
                                            vt::TextureSampling sampling = {}) {
        const vt::TextureLayout layout(shape);
        const vt::TileFormatInfo format = layout.tile_format();
        VulkanTextureInfo info;
        info.base_page = base_page;
        info.width = layout.width;
        info.height = layout.height;
        info.mip_count = layout.mip_count;
        info.tail_first_mip = layout.tail_first_mip;
        info.format = static_cast<std::uint32_t>(layout.format);
        info.tile_size = format.tile_size;
        info.tile_border = format.tile_border;
        info.tile_payload = format.tile_payload();
        info.tile_bytes = format.tile_bytes();
        info.page_tiles_x = format.page_tiles_x;
        info.page_tiles_y = format.page_tiles_y;
        info.address_u = static_cast<std::uint32_t>(sampling.address_u);
        info.address_v = static_cast<std::uint32_t>(sampling.address_v);
        info.color_space = static_cast<std::uint32_t>(sampling.color_space);
        info.record_bytes = format.block_bytes;
        if (layout.stack.count() > 0) {
            info.layer_count = layout.stack.count();
            for (std::uint32_t l = 0; l < info.layer_count; ++l) {
                info.layer_formats |= static_cast<std::uint32_t>(layout.stack.layer(l)) << (8 * l);
                info.layer_offsets |= layout.stack.layer_offset(l) << (8 * l);
            }
            info.srgb_layers = sampling.srgb_layers;
        } else {
            info.layer_formats = static_cast<std::uint32_t>(layout.format);
            info.srgb_layers = sampling.color_space == vt::ColorSpace::srgb ? 1u : 0u;
        }
        info.tile_levels = layout.tile_levels;
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            info.mip_first_page[mip] = static_cast<std::uint32_t>(layout.mips[mip].first_page);
            info.mip_pages_x[mip] = layout.mips[mip].pages_x;
        }
        return info;
    }
    // A square RGBA8 texture of 2^size_log2 texels on a side.
    static constexpr VulkanTextureInfo make(std::uint32_t base_page, std::uint32_t size_log2) {
        return make(base_page, vt::TextureShape::square(size_log2));
    }
};

static_assert(sizeof(VulkanTextureInfo) == std::size_t{21 + 2 * vt::max_mips} * 4,
              "tightly packed 32-bit words, as std430 lays out the GLSL struct");

}  // namespace vtpage
