#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"

#include <bit>
#include <cstring>
#include <string_view>

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

// What is wrong with a texture's sampling ("" when nothing is): a value outside the enums, or
// sRGB for a format that has no sRGB variant.
std::string sampling_problem(TileFormat format, const BakedTextureDescriptor& d) {
    if (d.address_u >= address_mode_count || d.address_v >= address_mode_count) {
        return detail::concat("address_u, address_v are ", d.address_u, ", ", d.address_v,
                              ", expected 0 .. ", address_mode_count - 1,
                              " (clamp_to_edge, repeat, mirrored_repeat)");
    }
    if (d.color_space >= color_space_count) {
        return detail::concat("color_space is ", d.color_space,
                              ", expected 0 (linear) or 1 (srgb)");
    }
    if (ColorSpace(d.color_space) == ColorSpace::srgb && !srgb_allowed(format)) {
        return detail::concat("color_space is srgb for ", tile_format_name(format),
                              ": sRGB is only for rgba8, bc1 and bc3");
    }
    return {};
}

// Width, height and format: what the layout and so every other field follow from.
TextureShape check_shape(const BakedTextureDescriptor& d, std::uint32_t version,
                         const std::string& path) {
    const char* magic =
        version >= 3 ? baked_texture_descriptor_magic : baked_texture_descriptor_magic_v2;
    if (std::memcmp(d.magic, magic, sizeof(d.magic)) != 0) {
        corrupt(path,
                detail::concat("magic is not ", std::string_view(magic, sizeof(d.magic)),
                               " (in an archive of version ", version, "): not a baked texture"));
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

// Version 2 has no sampling fields: zero there, as reserved bytes were.
void check_sampling(const BakedTextureDescriptor& d, TileFormat format, std::uint32_t version,
                    const std::string& path) {
    if (version < 3) {
        expect(path, "address_u (zero in version 2)", d.address_u, 0);
        expect(path, "address_v (zero in version 2)", d.address_v, 0);
        expect(path, "color_space (zero in version 2)", d.color_space, 0);
        return;
    }
    if (const std::string problem = sampling_problem(format, d); !problem.empty()) {
        corrupt(path, problem);
    }
}

}  // namespace

BakedTextureDescriptor make_baked_texture_descriptor(TextureShape shape, std::uint32_t source_bits,
                                                     TextureSampling sampling) {
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
    d.address_u = std::uint32_t(sampling.address_u);
    d.address_v = std::uint32_t(sampling.address_v);
    d.color_space = std::uint32_t(sampling.color_space);
    if (const std::string problem = sampling_problem(shape.format, d); !problem.empty()) {
        throw Error(Errc::invalid_argument, "make_baked_texture_descriptor", problem,
                    detail::concat("format=", tile_format_name(shape.format)));
    }
    return d;
}

PageArchiveShape baked_archive_shape(TextureShape shape) {
    const TextureLayout layout(shape);
    const TileFormatInfo info = layout.tile_format();
    return {layout.page_count, format_page_bytes, info.tile_bytes(), info.tiles_per_page()};
}

BakedTextureDescriptor check_baked_texture_descriptor(std::span<const std::byte> bytes,
                                                      const PageArchiveShape& archive,
                                                      std::uint32_t archive_version,
                                                      const std::string& path) {
    expect(path, "its size", bytes.size(), sizeof(BakedTextureDescriptor));
    BakedTextureDescriptor d;
    std::memcpy(&d, bytes.data(), sizeof(d));
    const TextureShape shape = check_shape(d, archive_version, path);
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
    check_sampling(d, shape.format, archive_version, path);
    expect(path, "reserved1", d.reserved1, 0);
    expect(path, "the archive's page_count", archive.page_count, wanted.page_count);
    expect(path, "the archive's page_bytes", archive.page_bytes, wanted.page_bytes);
    expect(path, "the archive's tile_bytes", archive.tile_bytes, wanted.tile_bytes);
    expect(path, "the archive's tiles_per_page", archive.tiles_per_page, wanted.tiles_per_page);
    return d;
}

}  // namespace vtpage::vt
