#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

#include <bit>
#include <cstring>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

static_assert(std::endian::native == std::endian::little,
              "the descriptor is little-endian and read with a plain copy");

namespace {

bool valid_source_bits(std::uint32_t bits) {
    return bits == 8 || bits == 16 || bits == 32 || bits == 64;
}

[[noreturn]] void corrupt(const std::string& path, const std::string& problem) {
    throw Error(Errc::corrupt_data, "BakedTextureArchive", "bad descriptor: " + problem,
                detail::concat("path=", path));
}

void expect(const std::string& path, const char* field, std::uint64_t value, std::uint64_t wanted) {
    if (value != wanted) {
        corrupt(path, detail::concat(field, " is ", value, ", expected ", wanted));
    }
}

// Width, height and format: what the layout and so every other field follow from.
TextureShape check_shape(const BakedTextureDescriptor& d, const std::string& path) {
    if (std::memcmp(d.magic, baked_texture_descriptor_magic, sizeof(d.magic)) != 0) {
        corrupt(path, "magic is not VTPGTEX2: not a baked texture");
    }
    if (d.width < 1 || d.width > max_size || d.height < 1 || d.height > max_size) {
        corrupt(path, detail::concat("width x height is ", d.width, " x ", d.height,
                                     ", expected 1 .. ", max_size, " on a side"));
    }
    if (!valid_tile_format(d.format)) {
        corrupt(path,
                detail::concat("format is ", d.format, ", expected 0 .. ", tile_format_count - 1));
    }
    return {d.width, d.height, TileFormat(d.format)};
}

}  // namespace

BakedTextureDescriptor make_baked_texture_descriptor(TextureShape shape,
                                                     std::uint32_t source_bits) {
    if (!shape.valid() || !valid_source_bits(source_bits)) {
        throw Error(Errc::invalid_argument, "make_baked_texture_descriptor",
                    "a texture is 1 .. 2^20 texels on a side in a known format, from samples of "
                    "8, 16, 32 or 64 bits",
                    detail::concat("width=", shape.width, ", height=", shape.height, ", format=",
                                   std::uint32_t(shape.format), ", bits=", source_bits));
    }
    const TextureLayout layout(shape);
    BakedTextureDescriptor d;
    std::memcpy(d.magic, baked_texture_descriptor_magic, sizeof(d.magic));
    d.width = d.source_width = shape.width;
    d.height = d.source_height = shape.height;
    d.format = std::uint32_t(shape.format);
    d.source_bits = source_bits;
    d.mip_count = layout.mip_count;
    d.page_count = layout.page_count;
    return d;
}

PageArchiveShape baked_archive_shape(TextureShape shape) {
    const TextureLayout layout(shape);
    const TileFormatInfo info = layout.tile_format();
    return {layout.page_count, format_page_bytes, info.tile_bytes(), info.tiles_per_page()};
}

BakedTextureDescriptor check_baked_texture_descriptor(std::span<const std::byte> bytes,
                                                      const PageArchiveShape& archive,
                                                      const std::string& path) {
    expect(path, "its size", bytes.size(), sizeof(BakedTextureDescriptor));
    BakedTextureDescriptor d;
    std::memcpy(&d, bytes.data(), sizeof(d));
    const TextureShape shape = check_shape(d, path);
    const TextureLayout layout(shape);
    const PageArchiveShape wanted = baked_archive_shape(shape);
    expect(path, "source_width", d.source_width, d.width);
    expect(path, "source_height", d.source_height, d.height);
    if (!valid_source_bits(d.source_bits)) {
        corrupt(path,
                detail::concat("source_bits is ", d.source_bits, ", expected 8, 16, 32 or 64"));
    }
    expect(path, "mip_count", d.mip_count, layout.mip_count);
    expect(path, "reserved0", d.reserved0, 0);
    expect(path, "page_count", d.page_count, layout.page_count);
    for (std::uint8_t byte : d.reserved) expect(path, "a reserved byte", byte, 0);
    expect(path, "the archive's page_count", archive.page_count, wanted.page_count);
    expect(path, "the archive's page_bytes", archive.page_bytes, wanted.page_bytes);
    expect(path, "the archive's tile_bytes", archive.tile_bytes, wanted.tile_bytes);
    expect(path, "the archive's tiles_per_page", archive.tiles_per_page, wanted.tiles_per_page);
    return d;
}

}  // namespace vtpage::vt
