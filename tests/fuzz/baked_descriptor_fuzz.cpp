// Fuzzes the check of a baked texture's descriptor (check_baked_texture_descriptor), the part of
// BakedTextureArchive's open that page_archive_fuzz.cpp does not reach (there the descriptor is
// opaque bytes). Input: the descriptor bytes (any length; 64 is right), checked as one of an
// archive of version 3, or of version 2 where the magic's last byte is '2', against the archive
// shape of a texture picked by the input's last byte, or, for inputs longer than 64 bytes, the
// shape written in bytes 64.. (page count, page bytes, tile bytes, tiles per page), so that lying
// archives are tried too. The check must either accept a descriptor whose shape lays out to
// exactly that archive shape and whose sampling is valid (sRGB only where the format has it;
// the defaults in version 2), or throw vtpage::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::vt;

constexpr TextureShape shapes[] = {
    {1, 1, TileFormat::rgba8},       {7, 5, TileFormat::bc1},
    {5120, 2880, TileFormat::bc3},   {241, 481, TileFormat::bc4},
    {1u << 20, 17, TileFormat::bc5}, {65536, 65536, TileFormat::rgba8}};

PageArchiveShape archive_shape(const std::uint8_t* data, std::size_t size) {
    if (size >= 64 + 24) {
        PageArchiveShape shape;
        std::memcpy(&shape.page_count, data + 64, 8);
        std::memcpy(&shape.page_bytes, data + 72, 8);
        std::memcpy(&shape.tile_bytes, data + 80, 4);
        std::memcpy(&shape.tiles_per_page, data + 84, 4);
        return shape;
    }
    const std::size_t pick = size == 0 ? 0 : data[size - 1] % std::size(shapes);
    return baked_archive_shape(shapes[pick]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const PageArchiveShape archive = archive_shape(data, size);
    const auto bytes = std::as_bytes(std::span(data, size < 64 ? size : 64));
    try {
        const std::uint32_t version = size >= 8 && data[7] == '2' ? 2 : 3;
        const BakedTextureDescriptor d =
            check_baked_texture_descriptor(bytes, archive, version, "input");
        // Accepted: the descriptor names a valid shape whose layout is the archive's.
        const TextureShape shape{d.width, d.height, TileFormat(d.format)};
        if (!shape.valid() || !(baked_archive_shape(shape) == archive)) std::abort();
        const TextureSampling sampling = d.sampling();
        if (d.address_u >= address_mode_count || d.address_v >= address_mode_count ||
            d.color_space >= color_space_count ||
            (sampling.color_space == ColorSpace::srgb && !srgb_allowed(shape.format)) ||
            (version == 2 && !(sampling == TextureSampling{}))) {
            std::abort();
        }
    } catch (const Error&) {}
    return 0;
}
