#include "texture_baker.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>

#include "bounded_thread_pool.hpp"
#include "mip_pyramid_builder.hpp"
#include "page_assembler.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

namespace vtpage::bake {

namespace {

constexpr std::uint32_t rows_a_read = 16;

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

// Tile x of a band: its rows are the band's, its columns mapped into the level by the address
// mode along u (vt::address_texel), so that the edge tiles' borders hold what sampling reads there.
std::vector<std::uint8_t> cut_tile(const MipBand& band, std::uint32_t x,
                                   const vt::TileFormatInfo& info, vt::AddressMode address_u) {
    std::vector<std::uint8_t> tile(std::size_t(info.tile_size) * info.tile_size * 4);
    for (std::uint32_t ty = 0; ty < info.tile_size; ++ty) {
        const std::uint8_t* row = band.rows[ty];
        std::uint8_t* out = tile.data() + std::size_t(ty) * info.tile_size * 4;
        for (std::uint32_t tx = 0; tx < info.tile_size; ++tx) {
            const std::int64_t texel =
                std::int64_t(x) * info.tile_payload() + std::int64_t(tx) - info.tile_border;
            const std::uint32_t lx = vt::address_texel(address_u, texel, band.level_width);
            std::copy_n(row + std::size_t(lx) * 4, 4, out + std::size_t(tx) * 4);
        }
    }
    return tile;
}

// Everything one bake shares between the band sink and the encoding workers.
struct Bake {
    const vt::TextureLayout& layout;
    const TextureBakeSettings& settings;
    PageAssembler& pages;
    TileQuality& quality;

    // Encodes a tile, measures its decoding against the source and hands it to its page.
    void encode(std::uint32_t mip, std::uint32_t x, std::uint32_t y,
                const std::vector<std::uint8_t>& source) const {
        const vt::TileFormatInfo info = layout.tile_format();
        std::vector<std::byte> encoded(info.tile_bytes());
        encode_tile(layout.format, source, encoded, settings.quality);
        std::vector<std::uint8_t> decoded(source.size());
        decode_tile(layout.format, encoded, decoded);
        quality.add(mip, x, y, source, decoded);
        pages.add_tile(mip, x, y, encoded);
    }
};

void report_progress(const TextureBakeSettings& settings, double fraction, std::string_view stage) {
    if (settings.progress) settings.progress(fraction, stage);
}

}  // namespace

std::uint64_t baked_archive_bytes_bound(vt::TextureShape shape) {
    const vt::TextureLayout layout(shape);
    const vt::TileFormatInfo info = layout.tile_format();
    const std::uint64_t n = layout.page_count;
    const std::uint64_t head = sizeof(vt::PageArchiveHeader) + sizeof(vt::BakedTextureDescriptor) +
                               n * sizeof(vt::PageIndexEntry) +
                               n * info.tiles_per_page() * sizeof(std::uint64_t);
    return align_up(head, vt::page_archive_alignment) + n * vt::format_page_bytes;
}

std::uint64_t bake_memory_bytes(std::uint32_t width, vt::TileFormat format,
                                vt::AddressMode address_v) {
    const vt::TileFormatInfo info = vt::tile_format_info(format);
    const std::uint64_t held = address_v == vt::AddressMode::repeat ? 2 : 1;
    const std::uint64_t rings = held * info.tile_size * 4 * 2;  // all levels: twice 0's, each held
    const std::uint64_t reads = std::uint64_t(rows_a_read) * 4;
    const std::uint64_t pages = (2 + 2 * held) * std::uint64_t(info.tile_bytes()) *
                                info.tiles_per_page() /
                                (std::uint64_t(info.page_tiles_x) * info.tile_payload());
    const std::uint64_t loader = 4096;  // libvips' buffers, and a margin over what was measured
    return (std::uint64_t(256) << 20) + std::uint64_t(width) * (rings + reads + pages + loader);
}

void check_bake_limits(const VipsImageInfo& image, const TextureBakeSettings& settings) {
    const vt::TextureShape shape{image.width, image.height, settings.format};
    if (!shape.valid()) {
        throw Error(Errc::invalid_argument, "bake_texture_archive",
                    detail::concat("a ", image.width, " x ", image.height,
                                   " image: textures are 1 .. ", vt::max_size, " on a side"));
    }
    const std::uint64_t bound = baked_archive_bytes_bound(shape);
    if (bound > settings.max_output_bytes) {
        throw Error(Errc::invalid_argument, "bake_texture_archive",
                    detail::concat("the baked file of a ", image.width, " x ", image.height,
                                   " image in ", vt::tile_format_name(settings.format),
                                   " could take up to ", bound, " bytes, more than the limit of ",
                                   settings.max_output_bytes, " (--max-output-gib)"));
    }
    const std::uint64_t bake =
        bake_memory_bytes(image.width, settings.format, settings.sampling.address_v);
    const std::uint64_t memory = bake + image.decode_bytes;
    if (memory > settings.max_memory_bytes) {
        throw Error(Errc::invalid_argument, "bake_texture_archive",
                    detail::concat("a ", image.width, " x ", image.height, " image (", image.loader,
                                   ") needs about ", memory >> 20, " MiB to bake (",
                                   image.decode_bytes >> 20, " MiB for the loader's whole frame, ",
                                   bake >> 20, " MiB for the bake), more than the limit of ",
                                   settings.max_memory_bytes >> 20, " MiB (--max-memory-gib)"));
    }
}

namespace {

// Reads every row into the pyramid; each band's tiles go to the pool as the band completes.
void encode_every_tile(VipsImageReader& reader, const Bake& bake, BoundedThreadPool& pool) {
    const VipsImageInfo& image = reader.info();
    const vt::TileFormatInfo info = bake.layout.tile_format();
    const vt::TextureSampling sampling = bake.settings.sampling;
    MipPyramidBuilder pyramid(
        image.width, image.height, info.tile_payload(), info.tile_border,
        [&](const MipBand& band) {
            for (std::uint32_t x = 0; x < bake.layout.mips[band.mip].tiles_x; ++x) {
                auto tile = std::make_shared<std::vector<std::uint8_t>>(
                    cut_tile(band, x, info, sampling.address_u));
                pool.submit([&bake, tile, mip = band.mip, x, y = band.tile_row] {
                    bake.encode(mip, x, y, *tile);
                });
            }
        },
        sampling);
    std::vector<std::uint8_t> rows(std::size_t(rows_a_read) * image.width * 4);
    for (std::uint32_t y = 0; y < image.height; y += rows_a_read) {
        const std::uint32_t count = std::min(rows_a_read, image.height - y);
        const auto piece = std::span(rows).first(std::size_t(count) * image.width * 4);
        reader.read_rows(count, piece);
        pyramid.add_rows(count, piece);
        report_progress(bake.settings, double(y + count) / image.height, "encoding tiles");
    }
    pyramid.finish();
    pool.finish();
}

std::uint64_t size_of(const std::string& path) {
    std::error_code error;
    const std::uint64_t bytes = std::filesystem::file_size(path, error);
    if (error) {
        throw Error(Errc::io_error, "bake_texture_archive",
                    "cannot read the size of the file written: " + error.message(),
                    detail::concat("path=", path));
    }
    return bytes;
}

}  // namespace

TextureBakeReport bake_texture_archive(VipsImageReader& reader, const std::string& path,
                                       const TextureBakeSettings& settings) {
    const auto start = std::chrono::steady_clock::now();
    check_bake_limits(reader.info(), settings);
    const vt::TextureShape shape{reader.info().width, reader.info().height, settings.format};
    const vt::TextureLayout layout(shape);
    const vt::BakedTextureDescriptor descriptor =
        vt::make_baked_texture_descriptor(shape, reader.info().bits_per_sample, settings.sampling);
    // Told before the writer makes the file, so that no signal finds it unregistered.
    if (settings.partial_created) settings.partial_created(path + ".partial");
    vt::PageArchiveWriter writer(
        path, vt::baked_archive_shape(shape), std::as_bytes(std::span(&descriptor, 1)),
        {.zstd_level = settings.zstd_level, .parts_per_page = settings.parts_per_page});
    PageAssembler pages(layout, writer);
    TileQuality quality(layout);
    const Bake bake{layout, settings, pages, quality};
    {
        BoundedThreadPool pool(settings.threads);  // joined before what its jobs use goes
        encode_every_tile(reader, bake, pool);
    }
    report_progress(settings, 1.0, "writing the index");
    writer.finish();
    TextureBakeReport report;
    report.shape = shape;
    report.mip_count = layout.mip_count;
    report.page_count = layout.page_count;
    report.file_bytes = size_of(path);
    report.levels = quality.levels();
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace vtpage::bake
