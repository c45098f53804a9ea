// How the shaders see one virtual texture: where its pages start in the page table's address
// space and where each mip level's pages are, computed on the CPU from TextureLayout so that the
// shader never recomputes the layout. The GLSL struct VtTextureInfo (shaders/vtpage/
// virtual_texture.glsl) has the same std430 layout; its size is generated from this header.
#pragma once

#include <cstdint>

#include "vtpage/streaming/texture_layout.hpp"

namespace vtpage {

struct VulkanTextureInfo {
    std::uint32_t base_page = 0;  // global page index of the texture's first page
    std::uint32_t size_log2 = 0;
    std::uint32_t mip_count = 0;
    std::uint32_t tail_first_mip = 0;
    std::uint32_t mip_first_page[vt::max_mips] = {};  // relative to base_page; the tail page
                                                      // for every level in the tail
    std::uint32_t mip_pages_x[vt::max_mips] = {};

    // Page indices are 32-bit in the shaders: 2^32 pages of 2 MiB is 8 PiB, far beyond any
    // reservation (a process has 128 TiB of address space).
    static constexpr VulkanTextureInfo make(std::uint32_t base_page, std::uint32_t size_log2) {
        const vt::TextureLayout layout(size_log2);
        VulkanTextureInfo info;
        info.base_page = base_page;
        info.size_log2 = layout.size_log2;
        info.mip_count = layout.mip_count;
        info.tail_first_mip = layout.tail_first_mip;
        for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
            info.mip_first_page[mip] = static_cast<std::uint32_t>(layout.mips[mip].first_page);
            info.mip_pages_x[mip] = layout.mips[mip].pages_x;
        }
        return info;
    }
};

static_assert(sizeof(VulkanTextureInfo) == (4 + 2 * vt::max_mips) * 4,
              "tightly packed 32-bit words, as std430 lays out the GLSL struct");

}  // namespace vtpage
