// The procedural fill on the GPU: a block of 256 threads per 128 x 128 texels of a tile (an RGBA8
// tile, a quarter of a BC1 or BC3 tile). The block computes its region's lattice window level by
// level from the top into shared memory (two buffers: level m, m + 2 ... in the large one, m + 1,
// m + 3 ... in the small one). RGBA8: each warp writes rows of texels, each lane every 32nd
// texel of the row (conflict-free shared loads, coalesced stores). BC1 and BC3: each thread makes
// the 16 texels of one 4 x 4 block from the lattice and encodes them (a warp writes a row of 32
// blocks, 256 or 512 contiguous bytes). Same integer functions as the CPU code, so the same bytes.
#include <cuda_runtime.h>

#include <algorithm>

#include "streaming/sources/bc1_encoder.hpp"
#include "streaming/sources/bc3_encoder.hpp"
#include "streaming/sources/procedural_fill.hpp"
#include "streaming/sources/procedural_pattern.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::vt::fill {

namespace {

constexpr int block_threads = 256;
constexpr int warps = block_threads / 32;
constexpr std::uint32_t region_side = 128;       // tile texels per side that one block makes
constexpr int large_side = region_side + 1;      // level m: a region's texels need 129 corners
constexpr int small_side = region_side / 2 + 2;  // level m + 1: at most 66
constexpr std::size_t shared_bytes = sizeof(std::int32_t) * (std::size_t(large_side) * large_side +
                                                             std::size_t(small_side) * small_side);
constexpr std::size_t jobs_per_launch = 96;  // 96 x 40 bytes of kernel parameters
static_assert(tile_format_info(TileFormat::rgba8).tile_size == region_side &&
                  tile_format_info(TileFormat::bc1).tile_size % region_side == 0 &&
                  tile_format_info(TileFormat::bc3).tile_size % region_side == 0,
              "tiles are whole regions");

struct JobBatch {
    ProceduralPageJob jobs[jobs_per_launch];
};

// What one block makes: a region of a tile, in tile texels from (x0, y0).
struct Region {
    TileTask task;
    TileFormatInfo info;
    std::uint32_t x0 = 0, y0 = 0;
    std::uint32_t size = 0;  // of the mip level, texels per side

    __device__ std::uint32_t level_x(std::uint32_t t) const {
        return level_texel(task.x, t, size, info.tile_payload(), info.tile_border);
    }
    __device__ std::uint32_t level_y(std::uint32_t t) const {
        return level_texel(task.y, t, size, info.tile_payload(), info.tile_border);
    }
    // The level-m lattice points under the region's texels.
    __device__ procedural::Window window() const {
        return {std::int32_t(level_x(x0)), std::int32_t(level_y(y0)),
                std::int32_t(level_x(x0 + region_side - 1)) + 1,
                std::int32_t(level_y(y0 + region_side - 1)) + 1};
    }
};

// The region's level-m lattice into `large`, over region.window(); all threads take part.
__device__ void build_lattice(const Region& region, std::uint32_t seed, std::uint32_t size_log2,
                              std::int32_t* large, std::int32_t* small) {
    using namespace procedural;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const std::int32_t mip = std::int32_t(region.task.mip);
    const Window base = region.window();
    for (std::int32_t level = std::int32_t(size_log2); level >= mip; --level) {
        const std::int32_t steps = level - mip;
        const Window w = base.coarser(steps);
        const Window pw = base.coarser(steps + 1);
        std::int32_t* const target = (steps & 1) ? small : large;
        const std::int32_t* const parent = (steps & 1) ? large : small;
        const std::uint32_t key = level_key(seed, std::uint32_t(level));
        const bool top = level == std::int32_t(size_log2);
        const std::int32_t width = w.width(), height = w.height();
        for (std::int32_t row = warp; row < height; row += warps) {
            const std::int32_t iy = w.y0 + row;
            for (std::int32_t column = lane; column < width; column += 32) {
                const std::int32_t ix = w.x0 + column;
                std::int32_t v = displacement(key, std::uint32_t(level), ix, iy);
                if (!top) v += interpolate_parent(parent, pw, ix, iy);
                target[row * width + column] = v;
            }
        }
        __syncthreads();
    }
}

// RGBA8: each warp writes rows of the region, each lane every 32nd texel.
__device__ void write_rgba8(const Region& region, std::uint32_t size_log2,
                            const std::int32_t* lattice, std::uint32_t* out) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const procedural::Window base = region.window();
    const std::int32_t stride = base.width();
    const std::uint32_t n = region.info.tile_size;
    std::uint32_t columns[region_side / 32];
#pragma unroll
    for (int k = 0; k < int(region_side / 32); ++k) {
        columns[k] = region.level_x(region.x0 + lane + 32 * k) - std::uint32_t(base.x0);
    }
    for (std::uint32_t ty = region.y0 + warp; ty < region.y0 + region_side; ty += warps) {
        const std::uint32_t gy = region.level_y(ty) - std::uint32_t(base.y0);
        const std::int32_t* r0 = lattice + gy * stride;
        const std::int32_t* r1 = r0 + stride;
#pragma unroll
        for (int k = 0; k < int(region_side / 32); ++k) {
            const std::uint32_t gx = columns[k];
            out[ty * n + region.x0 + lane + 32 * k] = procedural::texel_colour(
                r0[gx], r0[gx + 1], r1[gx], r1[gx + 1], region.task.mip, size_log2);
        }
    }
}

// One block of the format as one store: 8 bytes for BC1, 16 for BC3.
template <TileFormat format>
struct StoredBlock;
template <>
struct StoredBlock<TileFormat::bc1> {
    using Word = uint2;
    __device__ static void encode(const std::uint8_t* texels, std::uint8_t* out) {
        encode_bc1_block(texels, 16, out);
    }
};
template <>
struct StoredBlock<TileFormat::bc3> {
    using Word = uint4;
    __device__ static void encode(const std::uint8_t* texels, std::uint8_t* out) {
        encode_bc3_block(texels, 16, out);
    }
};

// BC1 and BC3: each thread makes one 4 x 4 block's texels from the lattice and encodes them.
template <TileFormat format>
__device__ void write_blocks(const Region& region, std::uint32_t size_log2,
                             const std::int32_t* lattice, std::uint8_t* out) {
    using Block = StoredBlock<format>;
    static_assert(sizeof(typename Block::Word) == tile_format_info(format).block_bytes);
    const procedural::Window base = region.window();
    const std::int32_t stride = base.width();
    constexpr std::uint32_t blocks_side = region_side / 4;
    for (std::uint32_t b = threadIdx.x; b < blocks_side * blocks_side; b += block_threads) {
        const std::uint32_t tx = region.x0 + 4 * (b % blocks_side);
        const std::uint32_t ty = region.y0 + 4 * (b / blocks_side);
        std::uint32_t texels[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const std::uint32_t gx = region.level_x(tx + i % 4) - std::uint32_t(base.x0);
            const std::uint32_t gy = region.level_y(ty + i / 4) - std::uint32_t(base.y0);
            const std::int32_t* r0 = lattice + gy * stride + gx;
            texels[i] = procedural::texel_colour(r0[0], r0[1], r0[stride], r0[stride + 1],
                                                 region.task.mip, size_log2);
        }
        typename Block::Word bytes;  // one store per block
        Block::encode(reinterpret_cast<const std::uint8_t*>(texels),
                      reinterpret_cast<std::uint8_t*>(&bytes));
        const std::uint32_t index = (ty / 4) * region.info.blocks_per_row() + tx / 4;
        reinterpret_cast<typename Block::Word*>(out)[index] = bytes;
    }
}

// An unused tile slot: each of the tile's blocks zeroes its share.
__device__ void zero_region(std::uint8_t* tile, std::uint32_t tile_bytes, std::uint32_t region,
                            std::uint32_t regions) {
    const std::uint32_t share = tile_bytes / regions;
    uint4* out4 = reinterpret_cast<uint4*>(tile + std::size_t(region) * share);
    for (std::uint32_t i = threadIdx.x; i < share / sizeof(uint4); i += block_threads) {
        out4[i] = make_uint4(0, 0, 0, 0);
    }
}

// Grid: x = tile slot * regions per tile + region, y = the job. One instance per format, so that
// the RGBA8 kernel keeps its few registers (the BC encoders need many).
template <TileFormat format>
__global__ void __launch_bounds__(block_threads) procedural_fill_kernel(JobBatch batch) {
    extern __shared__ std::int32_t shared[];
    std::int32_t* const large = shared;
    std::int32_t* const small = shared + large_side * large_side;

    constexpr TileFormatInfo info = tile_format_info(format);
    constexpr std::uint32_t per_side = info.tile_size / region_side, regions = per_side * per_side;
    const ProceduralPageJob& job = batch.jobs[blockIdx.y];
    const std::uint32_t slot = blockIdx.x / regions, part = blockIdx.x % regions;
    Region region;
    region.info = info;
    region.task = tile_task(job, slot);
    std::uint8_t* const tile =
        reinterpret_cast<std::uint8_t*>(job.destination + std::uint64_t(slot) * info.tile_bytes());
    if (!region.task.valid) {
        zero_region(tile, info.tile_bytes(), part, regions);
        return;
    }
    region.x0 = (part % per_side) * region_side;
    region.y0 = (part / per_side) * region_side;
    region.size = 1u << (job.size_log2 - region.task.mip);
    build_lattice(region, job.seed, job.size_log2, large, small);
    // Level m is in the large buffer, over region.window().
    if constexpr (info.compressed()) {
        write_blocks<format>(region, job.size_log2, large, tile);
    } else {
        write_rgba8(region, job.size_log2, large, reinterpret_cast<std::uint32_t*>(tile));
    }
}

void check(cudaError_t error, const char* what, std::size_t count) {
    if (error == cudaSuccess) return;
    throw Error(Errc::backend_failure, "ProceduralSource::fill_device", what,
                detail::concat("pages=", count), error, cudaGetErrorName(error));
}

// One launch for `n` jobs of one format: a block per region of every tile of every page.
template <TileFormat format>
void launch_batch(const ProceduralPageJob* jobs, std::size_t n, cudaStream_t stream,
                  std::size_t count) {
    check(cudaFuncSetAttribute(procedural_fill_kernel<format>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)),
          "cudaFuncSetAttribute failed", count);
    constexpr TileFormatInfo info = tile_format_info(format);
    constexpr std::uint32_t per_side = info.tile_size / region_side;
    JobBatch batch{};
    std::copy(jobs, jobs + n, batch.jobs);
    const dim3 grid(info.tiles_per_page() * per_side * per_side, unsigned(n));
    procedural_fill_kernel<format><<<grid, block_threads, shared_bytes, stream>>>(batch);
    check(cudaGetLastError(), "the fill kernel did not launch", count);
}

}  // namespace

void launch_procedural_fill(const ProceduralPageJob* jobs, std::size_t count, void* stream) {
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    std::size_t first = 0;
    while (first < count) {
        // A launch takes up to jobs_per_launch jobs of one format.
        std::size_t n = 1;
        while (n < jobs_per_launch && first + n < count &&
               jobs[first + n].format == jobs[first].format) {
            ++n;
        }
        switch (TileFormat(jobs[first].format)) {
            case TileFormat::bc1:
                launch_batch<TileFormat::bc1>(jobs + first, n, cuda_stream, count);
                break;
            case TileFormat::bc3:
                launch_batch<TileFormat::bc3>(jobs + first, n, cuda_stream, count);
                break;
            default:  // the source takes no other format
                launch_batch<TileFormat::rgba8>(jobs + first, n, cuda_stream, count);
                break;
        }
        first += n;
    }
}

}  // namespace vtpage::vt::fill
