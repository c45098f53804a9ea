// The procedural fill on the GPU: a block of 256 threads per tile. The block computes the tile's
// lattice window level by level from the top into shared memory (two buffers: level m, m + 2 ...
// in the large one, m + 1, m + 3 ... in the small one), then each warp writes rows of texels,
// each lane every 32nd texel of the row (conflict-free shared loads, coalesced stores). Same
// integer functions as the CPU code, so the same bytes.
#include <cuda_runtime.h>

#include <algorithm>

#include "procedural_fill.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/procedural_pattern.hpp"

namespace vtpage::vt::fill {

namespace {

constexpr int block_threads = 256;
constexpr int warps = block_threads / 32;
constexpr int large_side = tile_size + 1;      // level m: a tile's texels need 129 corners
constexpr int small_side = tile_size / 2 + 2;  // level m + 1: at most 66
constexpr std::size_t shared_bytes = sizeof(std::int32_t) * (std::size_t(large_side) * large_side +
                                                             std::size_t(small_side) * small_side);
constexpr std::size_t jobs_per_launch = 96;  // 96 x 40 bytes of kernel parameters

struct JobBatch {
    ProceduralPageJob jobs[jobs_per_launch];
};

__global__ void __launch_bounds__(block_threads) procedural_fill_kernel(JobBatch batch) {
    using namespace procedural;
    extern __shared__ std::int32_t shared[];
    std::int32_t* const large = shared;
    std::int32_t* const small = shared + large_side * large_side;

    const ProceduralPageJob& job = batch.jobs[blockIdx.y];
    const TileTask task = tile_task(job, blockIdx.x);
    std::uint32_t* const out =
        reinterpret_cast<std::uint32_t*>(job.destination + std::uint64_t(blockIdx.x) * tile_bytes);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    if (!task.valid) {
        uint4* out4 = reinterpret_cast<uint4*>(out);
        for (int i = threadIdx.x; i < int(tile_bytes / sizeof(uint4)); i += block_threads) {
            out4[i] = make_uint4(0, 0, 0, 0);
        }
        return;
    }
    const std::uint32_t mip = task.mip, size_log2 = job.size_log2;
    const std::uint32_t size = 1u << (size_log2 - mip);
    const Window base{std::int32_t(level_texel(task.x, 0, size)),
                      std::int32_t(level_texel(task.y, 0, size)),
                      std::int32_t(level_texel(task.x, tile_size - 1, size)) + 1,
                      std::int32_t(level_texel(task.y, tile_size - 1, size)) + 1};

    for (std::int32_t level = std::int32_t(size_log2); level >= std::int32_t(mip); --level) {
        const std::int32_t steps = level - std::int32_t(mip);
        const Window w = base.coarser(steps);
        const Window pw = base.coarser(steps + 1);
        std::int32_t* const target = (steps & 1) ? small : large;
        const std::int32_t* const parent = (steps & 1) ? large : small;
        const std::uint32_t key = level_key(job.seed, std::uint32_t(level));
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

    // Level m is in the large buffer, over window `base`.
    const std::int32_t stride = base.width();
    std::uint32_t columns[tile_size / 32];
#pragma unroll
    for (int k = 0; k < int(tile_size / 32); ++k) {
        columns[k] =
            level_texel(task.x, std::uint32_t(lane + 32 * k), size) - std::uint32_t(base.x0);
    }
    for (std::uint32_t ty = warp; ty < tile_size; ty += warps) {
        const std::uint32_t gy = level_texel(task.y, ty, size) - std::uint32_t(base.y0);
        const std::int32_t* r0 = large + gy * stride;
        const std::int32_t* r1 = r0 + stride;
#pragma unroll
        for (int k = 0; k < int(tile_size / 32); ++k) {
            const std::uint32_t gx = columns[k];
            out[ty * tile_size + lane + 32 * k] =
                texel_colour(r0[gx], r0[gx + 1], r1[gx], r1[gx + 1], mip, size_log2);
        }
    }
}

void check(cudaError_t error, const char* what, std::size_t count) {
    if (error == cudaSuccess) return;
    throw Error(Errc::backend_failure, "ProceduralSource::fill_device", what,
                detail::concat("pages=", count), error, cudaGetErrorName(error));
}

}  // namespace

void launch_procedural_fill(const ProceduralPageJob* jobs, std::size_t count, void* stream) {
    check(cudaFuncSetAttribute(procedural_fill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(shared_bytes)),
          "cudaFuncSetAttribute failed", count);
    for (std::size_t first = 0; first < count; first += jobs_per_launch) {
        const std::size_t n = std::min(jobs_per_launch, count - first);
        JobBatch batch{};
        std::copy(jobs + first, jobs + first + n, batch.jobs);
        const dim3 grid(tiles_per_page, unsigned(n));
        procedural_fill_kernel<<<grid, block_threads, shared_bytes,
                                 static_cast<cudaStream_t>(stream)>>>(batch);
        check(cudaGetLastError(), "the fill kernel did not launch", count);
    }
}

}  // namespace vtpage::vt::fill
