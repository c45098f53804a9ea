#include "vtpage/streaming/sources/baked_texture.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <vector>

#include "streaming/archive/file_io.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/unique_fd.hpp"
#include "vtpage/config.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"

#if VTPAGE_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace vtpage::vt {

static_assert(std::endian::native == std::endian::little,
              "the baked format is little-endian and read with plain copies");

namespace {

using file_io::align_up;
using file_io::read_exact;

std::uint64_t table_bytes(std::uint64_t page_count) {
    return page_count * tiles_per_page * sizeof(std::uint64_t);
}

std::uint64_t file_bytes_for(const TextureLayout& layout) {
    const std::uint64_t data_offset =
        align_up(sizeof(BakedHeader) + table_bytes(layout.page_count), baked_data_alignment);
    return data_offset + layout.page_count * page_bytes;
}

// The smallest power of two at least max(width, height), as a log2; width and height are at
// most 2^max_size_log2.
std::uint32_t padded_size_log2(std::uint32_t width, std::uint32_t height) {
    return std::uint32_t(std::bit_width(std::max({width, height, 1u}) - 1));
}

[[noreturn]] void invalid(const char* operation, const std::string& problem, std::uint32_t width,
                          std::uint32_t height) {
    throw Error(Errc::invalid_argument, operation, problem,
                detail::concat("width=", width, ", height=", height));
}

// An image of width x height: 1 .. 2^max_size_log2 on a side, 4 bytes a texel.
void check_image(const RgbaImage& image, const char* operation) {
    if (image.width == 0 || image.height == 0) {
        invalid(operation, "the image is empty", image.width, image.height);
    }
    if (image.width > (1u << max_size_log2) || image.height > (1u << max_size_log2)) {
        invalid(operation,
                detail::concat("images are at most 2^", max_size_log2, " texels on a side"),
                image.width, image.height);
    }
    const std::size_t wanted = std::size_t(image.width) * image.height * 4;
    if (image.texels.size() != wanted) {
        invalid(operation,
                detail::concat("the image has ", image.texels.size(), " bytes of texels, ",
                               image.width, " x ", image.height, " x 4 = ", wanted, " expected"),
                image.width, image.height);
    }
}

// Sizes image.texels for its width and height: out_of_memory rather than std::bad_alloc.
void allocate_texels(RgbaImage& image, const char* operation) {
    const std::size_t bytes = std::size_t(image.width) * image.height * 4;
    try {
        image.texels.resize(bytes);
    } catch (const std::bad_alloc&) {
        throw Error(Errc::out_of_memory, operation,
                    detail::concat("cannot allocate ", bytes, " bytes of texels"),
                    detail::concat("width=", image.width, ", height=", image.height));
    }
}

std::uint64_t header_checksum(BakedHeader header) {
    header.header_checksum = 0;
    return checksum64(std::as_bytes(std::span(&header, 1)));
}

std::string tile_text(const TextureLayout& layout, std::uint64_t page, std::uint32_t tile) {
    const PagePosition position = page_position(layout, page);
    if (layout.in_tail(position.mip)) {
        // Tile t of the tail holds mip tail_first_mip + t; the tiles past the last mip are
        // unused (zero bytes, checksummed all the same).
        if (position.mip + tile >= layout.mip_count) {
            return detail::concat("page ", page, " (the mip tail), tile ", tile,
                                  " (unused: the last mip is ", layout.mip_count - 1, ")");
        }
        return detail::concat("page ", page, " (the mip tail), tile ", tile, " (mip ",
                              position.mip + tile, ")");
    }
    return detail::concat(
        "page ", page, " (mip ", position.mip, ", page ", position.x, ",", position.y, "), tile ",
        tile, " (tile ", position.x * page_tiles_x + tile % page_tiles_x, ",",
        position.y * page_tiles_y + tile / page_tiles_x, " of mip ", position.mip, ")");
}

// Tile `tile` of a page from the mip images (each a square power of two).
void build_tile(const std::vector<RgbaImage>& mips, const TextureLayout& layout, std::uint64_t page,
                std::uint32_t tile, std::byte* out) {
    const PagePosition position = page_position(layout, page);
    std::uint32_t mip = position.mip, tile_x = 0, tile_y = 0;
    if (layout.in_tail(position.mip)) {
        mip = position.mip + tile;
    } else {
        tile_x = position.x * page_tiles_x + tile % page_tiles_x;
        tile_y = position.y * page_tiles_y + tile / page_tiles_x;
    }
    if (!layout.has_tile(mip, tile_x, tile_y)) {
        std::memset(out, 0, tile_bytes);
        return;
    }
    const RgbaImage& level = mips[mip];
    for (std::uint32_t ty = 0; ty < tile_size; ++ty) {
        const std::uint32_t y = level_texel(tile_y, ty, level.height);
        const std::uint8_t* row = level.texels.data() + std::size_t(y) * level.width * 4;
        for (std::uint32_t tx = 0; tx < tile_size; ++tx) {
            const std::uint32_t x = level_texel(tile_x, tx, level.width);
            std::memcpy(out + texel_offset(tx, ty), row + std::size_t(x) * 4, 4);
        }
    }
}

}  // namespace

std::uint64_t baked_file_bytes(std::uint32_t width, std::uint32_t height) {
    if (width == 0 || height == 0 || width > (1u << max_size_log2) ||
        height > (1u << max_size_log2)) {
        invalid("baked_file_bytes",
                detail::concat("images are 1 to 2^", max_size_log2, " texels on a side"), width,
                height);
    }
    return file_bytes_for(TextureLayout(padded_size_log2(width, height)));
}

void check_bake_shape(std::uint32_t width, std::uint32_t height, const BakeSettings& settings) {
    const std::uint64_t file_bytes = baked_file_bytes(width, height);
    const std::uint64_t side = std::uint64_t(1) << padded_size_log2(width, height);
    const std::uint64_t texels = std::uint64_t(width) * height;
    if (side * side / texels > settings.max_padding_factor) {
        invalid("bake_texture",
                detail::concat("a ", width, " x ", height, " image pads to ", side, " x ", side,
                               ", ", side * side / texels, " times its texels (at most ",
                               settings.max_padding_factor, ")"),
                width, height);
    }
    if (file_bytes > settings.max_output_bytes) {
        invalid("bake_texture",
                detail::concat("the baked file of a ", width, " x ", height, " image would be ",
                               file_bytes, " bytes, more than the limit of ",
                               settings.max_output_bytes),
                width, height);
    }
}

RgbaImage pad_to_square_power_of_two(const RgbaImage& image) {
    check_image(image, "pad_to_square_power_of_two");
    const std::uint32_t side = 1u << padded_size_log2(image.width, image.height);
    if (side == image.width && side == image.height) return image;
    RgbaImage out;
    out.width = out.height = side;
    allocate_texels(out, "pad_to_square_power_of_two");
    for (std::uint32_t y = 0; y < side; ++y) {
        const std::uint32_t sy = std::min(y, image.height - 1);
        for (std::uint32_t x = 0; x < side; ++x) {
            const std::uint32_t sx = std::min(x, image.width - 1);
            std::memcpy(&out.texels[(std::size_t(y) * side + x) * 4],
                        &image.texels[(std::size_t(sy) * image.width + sx) * 4], 4);
        }
    }
    return out;
}

RgbaImage downsample_box(const RgbaImage& level) {
    check_image(level, "downsample_box");
    if (level.width != level.height || !std::has_single_bit(level.width) || level.width == 1) {
        invalid("downsample_box", "the level is not a square power of two larger than 1 x 1",
                level.width, level.height);
    }
    RgbaImage out;
    out.width = std::max(1u, level.width / 2);
    out.height = std::max(1u, level.height / 2);
    allocate_texels(out, "downsample_box");
    for (std::uint32_t y = 0; y < out.height; ++y) {
        const std::uint8_t* r0 = level.texels.data() + std::size_t(2 * y) * level.width * 4;
        const std::uint8_t* r1 = r0 + std::size_t(level.width) * 4;
        std::uint8_t* o = out.texels.data() + std::size_t(y) * out.width * 4;
        for (std::uint32_t x = 0; x < out.width; ++x) {
            for (int c = 0; c < 4; ++c) {
                const unsigned sum =
                    r0[8 * x + c] + r0[8 * x + 4 + c] + r1[8 * x + c] + r1[8 * x + 4 + c];
                o[4 * x + c] = std::uint8_t((sum + 2) / 4);
            }
        }
    }
    return out;
}

void bake_texture(const RgbaImage& image, const std::string& path, const BakeSettings& settings) {
    check_image(image, "bake_texture");
    check_bake_shape(image.width, image.height, settings);
    auto progress = [&](double fraction, std::string_view stage) {
        if (settings.progress) settings.progress(fraction, stage);
    };
    std::vector<RgbaImage> mips;
    mips.push_back(pad_to_square_power_of_two(image));
    const std::uint32_t size_log2 = std::uint32_t(std::countr_zero(mips.front().width));
    const TextureLayout layout(size_log2);
    while (mips.back().width > 1) {
        progress(0.1 * double(mips.size()) / double(layout.mip_count), "filtering mips");
        mips.push_back(downsample_box(mips.back()));
    }

    BakedHeader header;
    std::memcpy(header.magic, baked_magic, sizeof(header.magic));
    header.version = baked_version;
    header.header_bytes = sizeof(BakedHeader);
    header.size_log2 = size_log2;
    header.tile_size = tile_size;
    header.tile_border = tile_border;
    header.texel_bytes = texel_bytes;
    header.tiles_per_page = tiles_per_page;
    header.source_width = image.width;
    header.source_height = image.height;
    header.page_count = layout.page_count;
    header.page_bytes = page_bytes;
    header.checksum_offset = sizeof(BakedHeader);
    header.data_offset =
        align_up(header.checksum_offset + table_bytes(layout.page_count), baked_data_alignment);
    header.file_bytes = header.data_offset + layout.page_count * page_bytes;

    const std::string temporary = path + ".partial";
    UniqueFd fd = file_io::create_temporary(temporary, "bake_texture");
    try {
        std::vector<std::uint64_t> table(layout.page_count * tiles_per_page);
        std::vector<std::byte> page(page_bytes);
        for (std::uint64_t p = 0; p < layout.page_count; ++p) {
            for (std::uint32_t t = 0; t < tiles_per_page; ++t) {
                std::byte* tile = page.data() + std::size_t(t) * tile_bytes;
                build_tile(mips, layout, p, t, tile);
                table[p * tiles_per_page + t] = checksum64(std::span(tile, tile_bytes));
            }
            file_io::write_exact(fd.get(), page.data(), page.size(),
                                 header.data_offset + p * page_bytes, "bake_texture", temporary);
            progress(0.1 + 0.9 * double(p + 1) / double(layout.page_count), "writing pages");
        }
        const auto table_span = std::as_bytes(std::span(table));
        header.table_checksum = checksum64(table_span);
        header.header_checksum = header_checksum(header);
        file_io::write_exact(fd.get(), table_span.data(), table_span.size(), header.checksum_offset,
                             "bake_texture", temporary);
        file_io::write_exact(fd.get(), &header, sizeof(header), 0, "bake_texture", temporary);
        if (::ftruncate(fd.get(), off_t(header.file_bytes)) != 0) {
            throw Error(Errc::io_error, "bake_texture",
                        detail::concat("cannot finish the file: ", errno_message(errno)),
                        detail::concat("path=", temporary), errno, errno_name(errno));
        }
        file_io::commit_temporary(fd, temporary, path, "bake_texture");
    } catch (...) {
        fd.reset();
        ::unlink(temporary.c_str());
        throw;
    }
}

struct BakedTextureFile::State {
    std::string path;
    UniqueFd fd;
    BakedHeader header;
    TextureLayout layout;
    std::vector<std::uint64_t> table;

    [[noreturn]] void corrupt(const std::string& detail_text) const {
        throw Error(Errc::corrupt_data, "BakedTextureFile", detail_text,
                    detail::concat("path=", path));
    }
};

namespace {

// The header fields that a checksum recomputed by hand could otherwise vouch for: each has one
// right value, given size_log2.
void check_header_fields(const BakedTextureFile::State& s) {
    const BakedHeader& h = s.header;
    if (h.flags != 0) {
        s.corrupt(detail::concat("inconsistent header: flags is ", h.flags, ", expected 0"));
    }
    for (std::uint8_t byte : h.reserved) {
        if (byte != 0) s.corrupt("inconsistent header: the reserved bytes are not zero");
    }
    const std::uint32_t limit = 1u << max_size_log2;
    if (h.source_width == 0 || h.source_height == 0 || h.source_width > limit ||
        h.source_height > limit ||
        padded_size_log2(h.source_width, h.source_height) != h.size_log2) {
        s.corrupt(detail::concat("inconsistent header: a ", h.source_width, " x ", h.source_height,
                                 " source does not pad to 2^", h.size_log2, " texels"));
    }
}

}  // namespace

BakedTextureFile::BakedTextureFile(const std::string& path) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.path = path;
    std::uint64_t file_size = 0;
    s.fd = file_io::open_regular_file(path, "BakedTextureFile", file_size);
    if (file_size < sizeof(BakedHeader)) {
        s.corrupt(detail::concat("truncated: the file has ", file_size, " bytes, less than the ",
                                 sizeof(BakedHeader), "-byte header"));
    }
    if (!read_exact(s.fd.get(), &s.header, sizeof(BakedHeader), 0, "BakedTextureFile", path)) {
        s.corrupt("truncated: the header could not be read whole");
    }
    const BakedHeader& h = s.header;
    if (std::memcmp(h.magic, baked_magic, sizeof(h.magic)) != 0) {
        s.corrupt("bad magic: not a vtpage baked texture");
    }
    if (h.version != baked_version) {
        s.corrupt(detail::concat("unsupported version ", h.version, " (this build reads version ",
                                 baked_version, ")"));
    }
    if (header_checksum(h) != h.header_checksum) {
        s.corrupt("header checksum mismatch: the header is corrupt");
    }
    auto expect = [&](const char* field, std::uint64_t value, std::uint64_t wanted) {
        if (value != wanted) {
            s.corrupt(detail::concat("inconsistent header: ", field, " is ", value, ", expected ",
                                     wanted));
        }
    };
    expect("header_bytes", h.header_bytes, sizeof(BakedHeader));
    if (h.size_log2 > max_size_log2) {
        s.corrupt(detail::concat("inconsistent header: size_log2 is ", h.size_log2, ", at most ",
                                 max_size_log2));
    }
    s.layout = TextureLayout(h.size_log2);
    expect("tile_size", h.tile_size, tile_size);
    expect("tile_border", h.tile_border, tile_border);
    expect("texel_bytes", h.texel_bytes, texel_bytes);
    expect("tiles_per_page", h.tiles_per_page, tiles_per_page);
    expect("page_count", h.page_count, s.layout.page_count);
    expect("page_bytes", h.page_bytes, page_bytes);
    expect("checksum_offset", h.checksum_offset, sizeof(BakedHeader));
    expect("data_offset", h.data_offset,
           align_up(h.checksum_offset + table_bytes(h.page_count), baked_data_alignment));
    expect("file_bytes", h.file_bytes, h.data_offset + h.page_count * page_bytes);
    check_header_fields(s);
    if (file_size < h.file_bytes) {
        s.corrupt(detail::concat("truncated: the file has ", file_size, " bytes, the header says ",
                                 h.file_bytes));
    }
    if (file_size > h.file_bytes) {
        s.corrupt(detail::concat("size mismatch: the file has ", file_size,
                                 " bytes, the header says ", h.file_bytes));
    }
    s.table.resize(h.page_count * tiles_per_page);
    const auto table_span = std::as_writable_bytes(std::span(s.table));
    if (!read_exact(s.fd.get(), table_span.data(), table_span.size(), h.checksum_offset,
                    "BakedTextureFile", path)) {
        s.corrupt("truncated: the checksum table could not be read whole");
    }
    if (checksum64(table_span) != h.table_checksum) {
        s.corrupt("checksum table corrupt: its checksum does not match the header");
    }
}

BakedTextureFile::~BakedTextureFile() = default;

namespace {

// A page the file has, and bytes enough for it.
void check_page_argument(const BakedTextureFile::State& s, const char* operation,
                         std::uint64_t page, std::size_t bytes) {
    if (page >= s.header.page_count) {
        throw Error(Errc::out_of_range, operation,
                    detail::concat("page ", page, " is not in the file: it has ",
                                   s.header.page_count, " pages"),
                    detail::concat("path=", s.path, ", page=", page));
    }
    if (bytes < page_bytes) {
        throw Error(Errc::invalid_argument, operation,
                    detail::concat("a page is ", page_bytes, " bytes, ", bytes, " given"),
                    detail::concat("path=", s.path, ", page=", page, ", bytes=", bytes));
    }
}

// The bytes between the checksum table and the data are zero (no checksum covers them).
void check_padding(const BakedTextureFile::State& s) {
    const std::uint64_t start = s.header.checksum_offset + table_bytes(s.header.page_count);
    std::vector<std::byte> padding(s.header.data_offset - start);
    if (!read_exact(s.fd.get(), padding.data(), padding.size(), start, "BakedTextureFile",
                    s.path)) {
        s.corrupt("truncated: the padding after the checksum table could not be read");
    }
    for (std::size_t i = 0; i < padding.size(); ++i) {
        if (padding[i] != std::byte{0}) {
            s.corrupt(detail::concat("padding corrupt: byte ", start + i,
                                     " (between the checksum table and the data) is not zero"));
        }
    }
}

}  // namespace

const std::string& BakedTextureFile::path() const noexcept { return state_->path; }
const BakedHeader& BakedTextureFile::header() const noexcept { return state_->header; }

void BakedTextureFile::verify_page(std::uint64_t page, std::span<const std::byte> bytes) const {
    const State& s = *state_;
    check_page_argument(s, "BakedTextureFile::verify_page", page, bytes.size());
    for (std::uint32_t t = 0; t < tiles_per_page; ++t) {
        const std::uint64_t sum =
            checksum64(bytes.subspan(std::size_t(t) * tile_bytes, tile_bytes));
        if (sum != s.table[page * tiles_per_page + t]) {
            throw Error(Errc::corrupt_data, "BakedTextureFile::read_page",
                        detail::concat("tile checksum mismatch: ", tile_text(s.layout, page, t),
                                       ": the data is corrupt"),
                        detail::concat("path=", s.path));
        }
    }
}

void BakedTextureFile::read_page(std::uint64_t page, std::span<std::byte> destination,
                                 bool verify) const {
    const State& s = *state_;
    check_page_argument(s, "BakedTextureFile::read_page", page, destination.size());
    if (!read_exact(s.fd.get(), destination.data(), page_bytes,
                    s.header.data_offset + page * page_bytes, "BakedTextureFile::read_page",
                    s.path)) {
        throw Error(Errc::corrupt_data, "BakedTextureFile::read_page",
                    detail::concat("truncated: page ", page, " ends past the end of the file"),
                    detail::concat("path=", s.path));
    }
    if (verify) verify_page(page, destination.first(page_bytes));
}

void BakedTextureFile::check_all(const std::function<void(double)>& progress) const {
    check_padding(*state_);
    std::vector<std::byte> page(page_bytes);
    const std::uint64_t count = state_->header.page_count;
    for (std::uint64_t p = 0; p < count; ++p) {
        read_page(p, page, true);
        if (progress) progress(double(p + 1) / double(count));
    }
}

BakedFileSource::BakedFileSource(const std::string& path, BakedFileSettings settings)
    : settings_(settings) {
    if (baked_file_version(path) == 1) {
        v1_ = std::make_unique<BakedTextureFile>(path);
    } else {
        archive_ = std::make_unique<BakedTextureArchive>(path);
    }
}

BakedFileSource::~BakedFileSource() = default;

int BakedFileSource::version() const noexcept { return v1_ ? 1 : int(archive_->version()); }

TextureSampling BakedFileSource::sampling() const noexcept {
    return v1_ ? TextureSampling{} : archive_->sampling();
}

TextureShape BakedFileSource::shape() const noexcept {
    return v1_ ? v1_->layout().shape() : archive_->shape();
}

std::string BakedFileSource::name() const { return v1_ ? v1_->path() : archive_->path(); }

void BakedFileSource::read(std::uint64_t page, std::span<std::byte> destination) const {
    if (v1_) {
        v1_->read_page(page, destination, settings_.verify_checksums);
    } else {
        archive_->read_page(page, destination);
    }
}

void BakedFileSource::fill_host(std::uint64_t page, std::span<std::byte> destination) const {
    read(page, destination);
}

std::optional<StoredPageRead> BakedFileSource::stored_read(std::uint64_t page) const {
    if (!archive_) return std::nullopt;
    const StoredExtent extent = archive_->archive().stored_extent(page);
    return StoredPageRead{archive_->archive().fd(), extent.offset, extent.bytes};
}

void BakedFileSource::decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                                    std::span<std::byte> destination) const {
    if (!archive_) TileSource::decode_stored(page, stored, destination);
    archive_->archive().decode_page(page, stored, destination);
}

std::vector<StoredPart> BakedFileSource::split_stored(std::uint64_t page,
                                                      std::span<const std::byte> stored) const {
    if (!archive_) return TileSource::split_stored(page, stored);
    return archive_->archive().split_stored(page, stored);
}

void BakedFileSource::decode_stored_part(std::uint64_t page, const StoredPart& part,
                                         std::span<std::byte> destination) const {
    if (!archive_) return TileSource::decode_stored_part(page, part, destination);
    archive_->archive().decode_part(page, part, destination);
}

bool BakedFileSource::fills_device() const noexcept { return device_fills_built(); }

void BakedFileSource::fill_device(std::span<const DevicePageFill> fills,
                                  DeviceFillContext& context) const {
#if VTPAGE_HAS_CUDA
    for (const DevicePageFill& f : fills) {
        std::byte* staging = context.staging(page_bytes);
        read(f.page, std::span(staging, page_bytes));
        const cudaError_t error =
            cudaMemcpyAsync(reinterpret_cast<void*>(f.destination), staging, page_bytes,
                            cudaMemcpyHostToDevice, static_cast<cudaStream_t>(context.stream()));
        if (error != cudaSuccess) {
            throw Error(
                Errc::backend_failure, "BakedFileSource::fill_device", "cudaMemcpyAsync failed",
                detail::concat("path=", name(), ", page=", f.page), error, cudaGetErrorName(error));
        }
    }
#else
    (void)fills;
    (void)context;
    throw Error(Errc::not_supported, "BakedFileSource::fill_device", "built without CUDA");
#endif
}

}  // namespace vtpage::vt
