// The work of the procedural fill, shared by the CPU code and the CUDA kernel: one job per page,
// one task per tile. Private to the streaming layer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt::fill {

struct ProceduralPageJob {
    std::uint64_t destination = 0;  // page_bytes of memory (device or host)
    std::uint32_t seed = 0;
    std::uint32_t size_log2 = 0;
    std::uint32_t mip = 0;   // the page's mip; for the tail page its first mip
    std::uint32_t tail = 0;  // 1 for the tail page
    std::uint32_t first_tile_x = 0;
    std::uint32_t first_tile_y = 0;
    std::uint32_t tiles = 0;   // tiles per side of the mip
    std::uint32_t format = 0;  // a TileFormat: rgba8, bc1 or bc3
};

struct TileTask {
    bool valid = false;  // false: a tile slot the page does not use (written as zeros)
    std::uint32_t mip = 0;
    std::uint32_t x = 0;
    std::uint32_t y = 0;
};

VTPAGE_HOST_DEVICE constexpr TileTask tile_task(const ProceduralPageJob& job,
                                                std::uint32_t tile_in_page) {
    if (job.tail != 0) {
        const std::uint32_t mip = job.mip + tile_in_page;
        return {mip <= job.size_log2, mip, 0, 0};
    }
    const TileFormatInfo info = tile_format_info(TileFormat(job.format));
    const std::uint32_t x = job.first_tile_x + tile_in_page % info.page_tiles_x;
    const std::uint32_t y = job.first_tile_y + tile_in_page / info.page_tiles_x;
    return {x < job.tiles && y < job.tiles, job.mip, x, y};
}

inline ProceduralPageJob make_job(const TextureLayout& layout, std::uint32_t seed,
                                  std::uint64_t page, std::uint64_t destination) {
    const PagePosition position = page_position(layout, page);
    const TileFormatInfo info = layout.tile_format();
    ProceduralPageJob job;
    job.destination = destination;
    job.seed = seed;
    job.size_log2 = layout.mip_count - 1;  // square: 2^(mip_count - 1) texels
    job.mip = position.mip;
    job.tail = layout.in_tail(position.mip) ? 1 : 0;
    job.first_tile_x = position.x * info.page_tiles_x;
    job.first_tile_y = position.y * info.page_tiles_y;
    job.tiles = layout.mips[position.mip].tiles_x;  // square: tiles_x == tiles_y
    job.format = std::uint32_t(layout.format);
    return job;
}

// Enqueues the fill of `count` pages on a CUDA stream (a cudaStream_t). Throws
// backend_failure with the CUDA error when the launch fails. CUDA builds only.
void launch_procedural_fill(const ProceduralPageJob* jobs, std::size_t count, void* stream);

}  // namespace vtpage::vt::fill
