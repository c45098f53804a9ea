// Baked texture files: one image made into the page layout of TextureLayout, every mip level
// box-filtered from the one below, every tile with its border, so that streaming a page is one
// read of page_bytes at a fixed offset.
//
// File format, version 1 (little-endian):
//   offset 0      BakedHeader (128 bytes, below), magic "VTPGBAKE"
//   offset 128    checksum table: one checksum64 per tile, page_count x 32 entries in page
//                 order, tile order within a page (unused tiles are zero bytes and have a
//                 checksum too)
//                 then zero bytes up to data_offset
//   data_offset   the pages (4 KiB aligned), page_bytes each, in TextureLayout page order
// The header carries its own checksum and the checksum of the table, so a flipped bit anywhere
// is found: in the header, in the table, in the zero padding after it, or in a tile. Opening
// also checks every header field that has one right value (flags and reserved bytes are zero;
// source_width and source_height pad to exactly 2^size_log2), so that a header rewritten with
// a fresh checksum cannot say what the data is not.
//
// An image that is not a square power of two is padded to one by repeating its last column and
// row (source_width and source_height in the header say what was real). Mip m texel (x, y) is
// the rounded mean of mip m - 1 texels 2x..2x+1, 2y..2y+1: (a + b + c + d + 2) / 4 per channel.
//
// Errors: a file that cannot be opened or read is io_error, and so is one that is not a regular
// file (a FIFO or a device would block or never end); one that is too short, has a bad magic,
// version, header, table, padding or tile checksum is corrupt_data. The detail message names the
// problem (and `vtpage-bake --check` prints the same message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vtpage/streaming/archive/checksum64.hpp"  // the checksum of the format
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

inline constexpr char baked_magic[8] = {'V', 'T', 'P', 'G', 'B', 'A', 'K', 'E'};
inline constexpr std::uint32_t baked_version = 1;
inline constexpr std::uint64_t baked_data_alignment = 4096;

struct BakedHeader {
    char magic[8] = {};
    std::uint32_t version = 0;
    std::uint32_t header_bytes = 0;  // sizeof(BakedHeader)
    std::uint32_t size_log2 = 0;
    std::uint32_t tile_size = 0;       // 128
    std::uint32_t tile_border = 0;     // 4
    std::uint32_t texel_bytes = 0;     // 4 (RGBA8)
    std::uint32_t tiles_per_page = 0;  // 32
    std::uint32_t source_width = 0;
    std::uint32_t source_height = 0;
    std::uint32_t flags = 0;  // 0
    std::uint64_t page_count = 0;
    std::uint64_t page_bytes = 0;
    std::uint64_t checksum_offset = 0;
    std::uint64_t data_offset = 0;
    std::uint64_t file_bytes = 0;
    std::uint64_t table_checksum = 0;   // checksum64 of the checksum table
    std::uint64_t header_checksum = 0;  // checksum64 of the header with this field zero
    std::uint8_t reserved[24] = {};
};
static_assert(sizeof(BakedHeader) == 128, "the header is 128 bytes on disk");

// An RGBA8 image, rows top to bottom, 4 bytes per texel.
struct RgbaImage {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::vector<std::uint8_t> texels;  // width * height * 4
};

// Pads to a square power of two (at least 1 x 1) by repeating the last column and row.
// invalid_argument for an empty image, one larger than 2^20 on a side, or texels that are not
// width * height * 4 bytes.
RgbaImage pad_to_square_power_of_two(const RgbaImage& image);
// One mip level from the one below (a square power of two larger than 1 x 1): the box filter
// of the format. invalid_argument for any other level, or texels of the wrong size.
RgbaImage downsample_box(const RgbaImage& level);

struct BakeSettings {
    // Called now and then with the fraction done (0 .. 1) and what is being done.
    std::function<void(double fraction, std::string_view stage)> progress;
    // The largest file to write: a larger bake is refused before anything is allocated.
    std::uint64_t max_output_bytes = std::uint64_t(16) << 30;
    // The padded square may hold at most this many times the image's texels: padding is what
    // makes a degenerate shape expensive (a 1 x 16384 strip of 64 KiB becomes 16384 x 16384:
    // 1 GiB in memory, 1.8 GB on disk).
    std::uint64_t max_padding_factor = 64;
};

// The size of the file bake_texture writes for a width x height image (1 .. 2^20 on a side).
std::uint64_t baked_file_bytes(std::uint32_t width, std::uint32_t height);

// Checks that an image of this shape can be baked within the settings' limits, before it is
// decoded or padded: invalid_argument naming the limit and the numbers otherwise.
void check_bake_shape(std::uint32_t width, std::uint32_t height, const BakeSettings& settings);

// Writes `image` as a baked texture file at path (replacing it). invalid_argument for an image
// that check_bake_shape refuses or whose texels are not width * height * 4 bytes; io_error when
// the file cannot be written (a full disk included), and then nothing is left at the path or
// beside it. The file is made as `<path>.partial`, created exclusively and never through a
// symbolic link (one planted there is refused), then renamed over path.
void bake_texture(const RgbaImage& image, const std::string& path,
                  const BakeSettings& settings = {});

// A baked texture file opened for reading. Opening checks the header, the checksum table and
// the file's size; reads check each tile's checksum. Thread-safe (pread).
class BakedTextureFile {
public:
    explicit BakedTextureFile(const std::string& path);
    ~BakedTextureFile();
    BakedTextureFile(const BakedTextureFile&) = delete;
    BakedTextureFile& operator=(const BakedTextureFile&) = delete;

    const std::string& path() const noexcept;
    const BakedHeader& header() const noexcept;
    TextureLayout layout() const noexcept { return TextureLayout(header().size_log2); }

    // Reads one page (page_bytes) into destination; corrupt_data naming the tile when a
    // checksum does not match (when verify is true). out_of_range for a page the file does not
    // have, invalid_argument for a destination smaller than a page.
    void read_page(std::uint64_t page, std::span<std::byte> destination, bool verify = true) const;
    // Checks that the bytes of a page read elsewhere match the table (the first page_bytes of
    // bytes). out_of_range and invalid_argument as read_page.
    void verify_page(std::uint64_t page, std::span<const std::byte> bytes) const;
    // Checks every byte that opening does not: the padding after the checksum table, then
    // every page; progress(fraction) is called after each page.
    void check_all(const std::function<void(double fraction)>& progress = {}) const;

    // Defined in the implementation only (named here so that its helpers can take it).
    struct State;

private:
    std::unique_ptr<State> state_;
};

struct BakedFileSettings {
    // Check each tile as it is streamed (about 0.3 ms a page). Files of versions 2 and 3 are
    // always checked: their pages are decompressed, and the check comes with that.
    bool verify_checksums = true;
};

class BakedTextureArchive;

// Streams a baked file of version 1 (BakedTextureFile) or 2 and 3 (BakedTextureArchive), told
// apart by the magic: on the host backend the page is read (and, for versions 2 and 3, verified
// and decompressed) into the destination; on CUDA into pinned staging, then cudaMemcpyAsync to
// the page.
class BakedFileSource final : public TileSource {
public:
    explicit BakedFileSource(const std::string& path, BakedFileSettings settings = {});
    ~BakedFileSource() override;

    // 1 to 4: the file's format version.
    int version() const noexcept;
    // How the texture is meant to be sampled: what a version-3 file records; files of versions
    // 1 and 2 have the defaults (clamp to edge, linear).
    TextureSampling sampling() const noexcept override;
    TextureShape shape() const noexcept override;
    std::string name() const override;
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override;
    bool fills_device() const noexcept override;
    void fill_device(std::span<const DevicePageFill> fills,
                     DeviceFillContext& context) const override;
    // Files of versions 2 to 4: the page's stored extent, verified and decoded by decode_stored,
    // or in parts (a version-4 page is several frames) by split_stored and decode_stored_part.
    // Version 1 files fill as before (nullopt).
    std::optional<StoredPageRead> stored_read(std::uint64_t page) const override;
    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override;
    std::vector<StoredPart> split_stored(std::uint64_t page,
                                         std::span<const std::byte> stored) const override;
    void decode_stored_part(std::uint64_t page, const StoredPart& part,
                            std::span<std::byte> destination) const override;

private:
    void read(std::uint64_t page, std::span<std::byte> destination) const;

    std::unique_ptr<BakedTextureFile> v1_;
    std::unique_ptr<BakedTextureArchive> archive_;
    BakedFileSettings settings_;
};

}  // namespace vtpage::vt
