#include "vtpage/streaming/sources/procedural_source.hpp"

#include <cstring>
#include <vector>

#include "streaming/sources/bc1_encoder.hpp"
#include "streaming/sources/bc3_encoder.hpp"
#include "streaming/sources/procedural_fill.hpp"
#include "streaming/sources/procedural_pattern.hpp"
#include "vtpage/config.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"

namespace vtpage::vt {

namespace {

constexpr std::uint32_t max_tile_size = 256;  // BC1's and BC3's; RGBA8 tiles are 128
static_assert(tile_format_info(TileFormat::bc1).tile_size <= max_tile_size &&
              tile_format_info(TileFormat::bc3).tile_size <= max_tile_size);

// The level-`mip` lattice points over window `base` (row by row, into `lattice`), built level by
// level from the top over the windows that cover it.
void build_lattice(std::uint32_t seed, std::uint32_t size_log2, std::uint32_t mip,
                   const procedural::Window& base, std::vector<std::int32_t>& lattice) {
    using namespace procedural;
    thread_local std::vector<std::int32_t> current;
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
                if (!top) v += interpolate_parent(lattice.data(), parent_window, ix, iy);
                row[ix - w.x0] = v;
            }
        }
        lattice.swap(current);
        parent_window = w;
    }
}

// The CPU twin of the kernel in procedural_fill.cu: the texels of a valid tile in the format's
// geometry (tile_size rows of tile_size RGBA8 texels), four lattice corners per texel.
void tile_texels(std::uint32_t seed, std::uint32_t size_log2, const TileFormatInfo& info,
                 const fill::TileTask& task, std::uint32_t* out) {
    const std::uint32_t mip = task.mip, size = 1u << (size_log2 - mip), n = info.tile_size;
    const auto at = [&](std::uint32_t tile, std::uint32_t t) {
        return level_texel(tile, t, size, info.tile_payload(), info.tile_border);
    };
    const procedural::Window base{std::int32_t(at(task.x, 0)), std::int32_t(at(task.y, 0)),
                                  std::int32_t(at(task.x, n - 1)) + 1,
                                  std::int32_t(at(task.y, n - 1)) + 1};
    thread_local std::vector<std::int32_t> lattice;
    build_lattice(seed, size_log2, mip, base, lattice);
    const std::int32_t stride = base.width();
    std::uint32_t columns[max_tile_size];
    for (std::uint32_t t = 0; t < n; ++t) columns[t] = at(task.x, t) - std::uint32_t(base.x0);
    for (std::uint32_t ty = 0; ty < n; ++ty) {
        const std::uint32_t gy = at(task.y, ty) - std::uint32_t(base.y0);
        const std::int32_t* r0 = lattice.data() + std::size_t(gy) * stride;
        const std::int32_t* r1 = r0 + stride;
        for (std::uint32_t tx = 0; tx < n; ++tx) {
            const std::uint32_t gx = columns[tx];
            out[ty * n + tx] =
                procedural::texel_colour(r0[gx], r0[gx + 1], r1[gx], r1[gx + 1], mip, size_log2);
        }
    }
}

// A tile's texels as BC1 or BC3 blocks, row by row (the block order of tile_format.hpp).
template <TileFormat format>
void encode_tile(const std::uint32_t* texels, std::byte* out) {
    constexpr TileFormatInfo info = tile_format_info(format);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(texels);
    auto* blocks = reinterpret_cast<std::uint8_t*>(out);
    constexpr std::uint32_t per_row = info.blocks_per_row(), pitch = info.tile_size * 4;
    for (std::uint32_t by = 0; by < per_row; ++by) {
        for (std::uint32_t bx = 0; bx < per_row; ++bx) {
            const std::uint8_t* first = bytes + std::size_t(4 * by) * pitch + std::size_t(16) * bx;
            std::uint8_t* block = blocks + std::size_t(by * per_row + bx) * info.block_bytes;
            if constexpr (format == TileFormat::bc3) {
                encode_bc3_block(first, pitch, block);
            } else {
                encode_bc1_block(first, pitch, block);
            }
        }
    }
}

// One tile slot of a page in the format: zeros for an unused slot.
void fill_tile_cpu(std::uint32_t seed, std::uint32_t size_log2, TileFormat format,
                   const fill::TileTask& task, std::byte* out) {
    const TileFormatInfo info = tile_format_info(format);
    if (!task.valid) {
        std::memset(out, 0, info.tile_bytes());
        return;
    }
    if (!info.compressed()) {
        tile_texels(seed, size_log2, info, task, reinterpret_cast<std::uint32_t*>(out));
        return;
    }
    thread_local std::vector<std::uint32_t> texels;
    texels.resize(std::size_t(info.tile_size) * info.tile_size);
    tile_texels(seed, size_log2, info, task, texels.data());
    if (format == TileFormat::bc3) {
        encode_tile<TileFormat::bc3>(texels.data(), out);
    } else {
        encode_tile<TileFormat::bc1>(texels.data(), out);
    }
}

}  // namespace

ProceduralSource::ProceduralSource(ProceduralSettings settings) : settings_(settings) {
    if (settings_.size_log2 > max_size_log2) {
        throw Error(Errc::invalid_argument, "ProceduralSource",
                    detail::concat("textures are at most 2^", max_size_log2, " texels on a side"),
                    detail::concat("size_log2=", settings_.size_log2));
    }
    if (settings_.format != TileFormat::rgba8 && settings_.format != TileFormat::bc1 &&
        settings_.format != TileFormat::bc3) {
        throw Error(Errc::invalid_argument, "ProceduralSource",
                    detail::concat("the procedural source makes rgba8, bc1 or bc3 tiles, not ",
                                   tile_format_name(settings_.format)),
                    detail::concat("format=", std::uint32_t(settings_.format)));
    }
}

std::string ProceduralSource::name() const {
    // RGBA8's name as it always was; other formats say theirs.
    const std::string format = settings_.format == TileFormat::rgba8
                                   ? std::string()
                                   : detail::concat(" ", tile_format_name(settings_.format));
    return detail::concat("procedural seed ", settings_.seed, " size 2^", settings_.size_log2,
                          format);
}

void ProceduralSource::fill_tile(std::uint32_t mip, std::uint32_t tile_x, std::uint32_t tile_y,
                                 std::span<std::byte> destination) const {
    const TextureLayout layout = this->layout();
    if (destination.size() < layout.tile_format().tile_bytes()) {
        throw Error(Errc::invalid_argument, "ProceduralSource::fill_tile",
                    "the destination holds less than a tile",
                    detail::concat("bytes=", destination.size()));
    }
    fill::TileTask task{layout.has_tile(mip, tile_x, tile_y), mip, tile_x, tile_y};
    fill_tile_cpu(settings_.seed, settings_.size_log2, settings_.format, task, destination.data());
}

void ProceduralSource::fill_host(std::uint64_t page, std::span<std::byte> destination) const {
    const TextureLayout layout = this->layout();
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
    const TileFormatInfo info = layout.tile_format();
    for (std::uint32_t tile = 0; tile < info.tiles_per_page(); ++tile) {
        fill_tile_cpu(settings_.seed, settings_.size_log2, settings_.format,
                      fill::tile_task(job, tile),
                      destination.data() + std::size_t(tile) * info.tile_bytes());
    }
}

bool ProceduralSource::fills_device() const noexcept { return device_fills_built(); }

void ProceduralSource::fill_device(std::span<const DevicePageFill> fills,
                                   DeviceFillContext& context) const {
    const TextureLayout layout = this->layout();
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
