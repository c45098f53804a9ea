// Any image libvips can load (PNG, JPEG, TIFF and BigTIFF, WebP, GIF, HEIF), read top to bottom
// as RGBA8 rows without decoding it whole where the format allows: libvips opens it for
// sequential access, so memory grows with the width of the rows asked for, not with the image's
// height. Some images are decoded whole all the same (a GIF, a progressive JPEG, an interlaced
// PNG, WebP, HEIF): info().decode_bytes says how much memory that takes, from the header alone.
//
// The loaders libvips marks untrusted (SVG, PDF, EXR, HDR, PPM/PGM, BMP and PSD through
// ImageMagick, FITS, MAT, JPEG 2000, JPEG XL, OpenSlide, raw, csv, vips ...) are blocked unless
// allow_untrusted_loaders(true) is called: they are neither fuzzed nor bounded in memory. The
// file is opened once and libvips reads that descriptor, never the name again.
//
// Rows come as RGBA8 whatever the file holds: grey is replicated to R, G and B, alpha is 255
// where the image has none, 16-bit samples are scaled to 8 bits (round(v * 255 / 65535)), and
// CMYK or any other colour space is converted to sRGB by libvips.
//
// Errors (vtpage::Error): a file that is missing or cannot be opened is io_error, and so is one
// that is not a regular file (a FIFO would block libvips, so it is refused before libvips sees
// it); an image wider or higher than 2^20 is invalid_argument, found from its header before any
// decoding; bytes libvips cannot load, whether at open or in the middle of the rows (a truncated
// file), are corrupt_data, with libvips' own message. A read_rows call that asks for more rows
// than are left, or gives a buffer of the wrong size, is invalid_argument.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace vtpage::bake {

struct VipsImageInfo {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint32_t bands = 0;            // in the file: 1 grey, 3 RGB, 4 RGBA or CMYK, ...
    std::uint32_t bits_per_sample = 0;  // in the file: 8, 16, 32 ...
    bool has_alpha = false;
    std::string loader;  // libvips' loader, for example "pngload" or "tiffload"
    // The memory the loader takes at once beyond the rows asked for: the whole frame (or its
    // coefficients) for the formats that cannot be decoded row by row; 0 for those that can.
    std::uint64_t decode_bytes = 0;
};

// Starts libvips once per process (any thread; later calls return at once), with its operation
// cache off. The reader calls it; code that uses libvips beside the reader calls it first.
void initialise_vips();

// Lets the readers made from now on use the loaders libvips marks untrusted (blocked by default).
void allow_untrusted_loaders(bool allow);

class VipsImageReader {
public:
    static constexpr std::uint32_t max_side = 1u << 20;

    explicit VipsImageReader(const std::string& path);
    // An image held in memory (for the fuzz target): `bytes` must outlive the reader; errors
    // name the image "<memory>".
    explicit VipsImageReader(std::span<const std::uint8_t> bytes);
    ~VipsImageReader();
    VipsImageReader(VipsImageReader&&) noexcept;
    VipsImageReader& operator=(VipsImageReader&&) noexcept;

    const VipsImageInfo& info() const noexcept { return info_; }
    std::uint32_t rows_read() const noexcept { return rows_read_; }

    // The next `count` rows, top to bottom, into out: count x width x 4 bytes of RGBA8.
    void read_rows(std::uint32_t count, std::span<std::uint8_t> out);

private:
    struct Pipeline;

    // The image from its source: its header described and checked, its pipeline built.
    void open(std::unique_ptr<Pipeline> pipeline, std::span<const std::uint8_t> prefix);

    std::string path_;
    VipsImageInfo info_;
    std::unique_ptr<Pipeline> pipeline_;
    std::uint32_t rows_read_ = 0;
};

}  // namespace vtpage::bake
