#include "vtpage/streaming/procedural_source.hpp"

#include <cstring>
#include <vector>

#include "procedural_fill.hpp"
#include "vtpage/config.hpp"
#include "vtpage/streaming/device_fill_context.hpp"
#include "vtpage/streaming/procedural_pattern.hpp"

namespace vtpage::vt {

namespace {

// The CPU twin of the kernel in procedural_fill.cu: the tile's lattice window, level by level
// from the top, then four corners per texel.
void fill_tile_cpu(std::uint32_t seed, std::uint32_t size_log2, const fill::TileTask& task,
                   std::uint32_t* out) {
    using namespace procedural;
    if (!task.valid) {
        std::memset(out, 0, tile_bytes);
        return;
    }
    const std::uint32_t mip = task.mip;
    const std::uint32_t size = 1u << (size_log2 - mip);
    const Window base{std::int32_t(level_texel(task.x, 0, size)),
                      std::int32_t(level_texel(task.y, 0, size)),
                      std::int32_t(level_texel(task.x, tile_size - 1, size)) + 1,
                      std::int32_t(level_texel(task.y, tile_size - 1, size)) + 1};
    thread_local std::vector<std::int32_t> parent, current;
    Window parent_window{};
    for (std::int32_t level = std::int32_t(size_log2); level >= std::int32_t(mip); --level) {
        const Window w = base.coarser(level - std::int32_t(mip));
        const std::uint32_t key = level_key(seed, std::uint32_t(level));
        current.resize(std::size_t(w.width()) * std::size_t(w.height()));
        std::int32_t* row = current.data();
        const bool top = level == std::int32_t(size_log2);
        for (std::int32_t iy = w.y0; iy <= w.y1; ++iy, row += w.width()) {
            for (std::int32_t ix = w.x0; ix <= w.x1; ++ix) {
                std::int32_t v = displacement(key, std::uint32_t(level), ix, iy);
                if (!top) v += interpolate_parent(parent.data(), parent_window, ix, iy);
                row[ix - w.x0] = v;
            }
        }
        parent.swap(current);
        parent_window = base.coarser(level - std::int32_t(mip));
    }
    const std::int32_t stride = base.width();
    std::uint32_t columns[tile_size];
    for (std::uint32_t t = 0; t < tile_size; ++t) {
        columns[t] = level_texel(task.x, t, size) - std::uint32_t(base.x0);
    }
    for (std::uint32_t ty = 0; ty < tile_size; ++ty) {
        const std::uint32_t gy = level_texel(task.y, ty, size) - std::uint32_t(base.y0);
        const std::int32_t* r0 = parent.data() + std::size_t(gy) * stride;
        const std::int32_t* r1 = r0 + stride;
        for (std::uint32_t tx = 0; tx < tile_size; ++tx) {
            const std::uint32_t gx = columns[tx];
            out[ty * tile_size + tx] =
                texel_colour(r0[gx], r0[gx + 1], r1[gx], r1[gx + 1], mip, size_log2);
        }
    }
}

}  // namespace

ProceduralSource::ProceduralSource(ProceduralSettings settings) : settings_(settings) {
    if (settings_.size_log2 > max_size_log2) {
        throw Error(Errc::invalid_argument, "ProceduralSource",
                    detail::concat("textures are at most 2^", max_size_log2, " texels on a side"),
                    detail::concat("size_log2=", settings_.size_log2));
    }
}

std::string ProceduralSource::name() const {
    return detail::concat("procedural seed ", settings_.seed, " size 2^", settings_.size_log2);
}

void ProceduralSource::fill_tile(std::uint32_t mip, std::uint32_t tile_x, std::uint32_t tile_y,
                                 std::span<std::byte> destination) const {
    const TextureLayout layout(settings_.size_log2);
    if (destination.size() < tile_bytes) {
        throw Error(Errc::invalid_argument, "ProceduralSource::fill_tile",
                    "the destination holds less than a tile",
                    detail::concat("bytes=", destination.size()));
    }
    fill::TileTask task{layout.has_tile(mip, tile_x, tile_y), mip, tile_x, tile_y};
    fill_tile_cpu(settings_.seed, settings_.size_log2, task,
                  reinterpret_cast<std::uint32_t*>(destination.data()));
}

void ProceduralSource::fill_host(std::uint64_t page, std::span<std::byte> destination) const {
    const TextureLayout layout(settings_.size_log2);
    if (page >= layout.page_count) {
        throw Error(Errc::out_of_range, "ProceduralSource::fill_host",
                    detail::concat("the texture has ", layout.page_count, " pages"),
                    detail::concat("page=", page));
    }
    if (destination.size() < page_bytes) {
        throw Error(Errc::invalid_argument, "ProceduralSource::fill_host",
                    "the destination holds less than a page",
                    detail::concat("bytes=", destination.size()));
    }
    const fill::ProceduralPageJob job = fill::make_job(layout, settings_.seed, page, 0);
    for (std::uint32_t tile = 0; tile < tiles_per_page; ++tile) {
        fill_tile_cpu(
            settings_.seed, settings_.size_log2, fill::tile_task(job, tile),
            reinterpret_cast<std::uint32_t*>(destination.data() + std::size_t(tile) * tile_bytes));
    }
}

bool ProceduralSource::fills_device() const noexcept { return device_fills_built(); }

void ProceduralSource::fill_device(std::span<const DevicePageFill> fills,
                                   DeviceFillContext& context) const {
    const TextureLayout layout(settings_.size_log2);
    std::vector<fill::ProceduralPageJob> jobs;
    jobs.reserve(fills.size());
    for (const DevicePageFill& f : fills) {
        if (f.page >= layout.page_count) {
            throw Error(Errc::out_of_range, "ProceduralSource::fill_device",
                        detail::concat("the texture has ", layout.page_count, " pages"),
                        detail::concat("page=", f.page));
        }
        jobs.push_back(fill::make_job(layout, settings_.seed, f.page, f.destination));
    }
#if VTPAGE_HAS_CUDA
    if (!jobs.empty()) fill::launch_procedural_fill(jobs.data(), jobs.size(), context.stream());
#else
    (void)context;
    throw Error(Errc::not_supported, "ProceduralSource::fill_device", "built without CUDA");
#endif
}

}  // namespace vtpage::vt
