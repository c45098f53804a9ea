// The out-of-core bake: an image read row by row (VipsImageReader), its mip pyramid built in one
// pass (MipPyramidBuilder, tiles of the chosen format; sRGB colour filtered in linear light),
// each band cut into tiles whose borders at the texture's edges follow the address modes, tiles
// encoded on every core, pages assembled and written to a baked texture of version 3
// (baked_texture_archive.hpp) as they complete. Memory follows the image's width, not its
// height: the pyramid's row rings, a page row per level and a bounded queue of tiles.
//
// Errors (vtpage::Error): invalid_argument for a shape past the limits or a bake that would need
// more memory than allowed (both checked from the header, before any row is decoded); corrupt_data
// from the reader for bytes libvips cannot decode; io_error when the output cannot be written
// (nothing is left at the path or beside it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "block_codec.hpp"
#include "tile_quality.hpp"
#include "vips_image_reader.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vtpage::bake {

struct TextureBakeSettings {
    vt::TileFormat format = vt::TileFormat::bc1;
    EncodeQuality quality = EncodeQuality::good;
    // The largest file the bake may write, counted as if no page compressed.
    std::uint64_t max_output_bytes = std::uint64_t(16) << 30;
    // The most memory the bake may need: the loader's whole frame where it decodes one
    // (VipsImageInfo::decode_bytes) and the bake's own (bake_memory_bytes).
    std::uint64_t max_memory_bytes = std::uint64_t(4) << 30;
    unsigned threads = 0;  // 0: one per core
    int zstd_level = 3;
    // zstd frames a page is stored in (format version 4: decoded on as many threads at once).
    std::uint32_t parts_per_page = vt::page_archive_default_parts_per_page;
    // Recorded in the file's descriptor, and baked: the tiles' borders at the texture's edges
    // follow the address modes, and an sRGB texture's levels are filtered in linear light.
    vt::TextureSampling sampling;
    // Called now and then with the fraction done (0 .. 1) and what is being done.
    std::function<void(double fraction, std::string_view stage)> progress;
    // Called with the partial file's path just before it is created (a program removes it on
    // SIGINT; registered first, no signal can find the file unregistered).
    std::function<void(const std::string& partial_path)> partial_created;
};

struct TextureBakeReport {
    vt::TextureShape shape;
    std::uint32_t mip_count = 0;
    std::uint64_t page_count = 0;
    std::uint64_t file_bytes = 0;
    double seconds = 0;
    std::vector<LevelQuality> levels;
};

// The most bytes the file of a texture of this shape can take (every page stored raw).
std::uint64_t baked_archive_bytes_bound(vt::TextureShape shape);

// The memory the bake itself takes for an image this wide, at most (a bound measured on bakes of
// every format): the pyramid's row rings, the rows read, a page row per level in flight, the
// loader's row buffers, and a fixed part (threads, libraries, the queue of tiles). Repeat along
// v adds each level's first rows and first page row, held to the level's end.
std::uint64_t bake_memory_bytes(std::uint32_t width, vt::TileFormat format,
                                vt::AddressMode address_v = vt::AddressMode::clamp_to_edge);

// invalid_argument naming the numbers and the limit when the image's texture would pass the
// settings' output limit or the bake would need more than their memory limit.
void check_bake_limits(const VipsImageInfo& image, const TextureBakeSettings& settings);

// Bakes the reader's remaining rows (all of them: none may have been read) to path.
TextureBakeReport bake_texture_archive(VipsImageReader& reader, const std::string& path,
                                       const TextureBakeSettings& settings);

}  // namespace vtpage::bake
