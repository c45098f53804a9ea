// Any image libvips can load (PNG, JPEG, TIFF and BigTIFF, WebP, ...), read top to bottom as
// RGBA8 rows without decoding it whole: libvips opens it for sequential access, so memory grows
// with the width of the rows asked for, not with the image's height.
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
};

// Starts libvips once per process (any thread; later calls return at once), with its operation
// cache off. The reader calls it; code that uses libvips beside the reader calls it first.
void initialise_vips();

class VipsImageReader {
public:
    static constexpr std::uint32_t max_side = 1u << 20;

    explicit VipsImageReader(const std::string& path);
    ~VipsImageReader();
    VipsImageReader(VipsImageReader&&) noexcept;
    VipsImageReader& operator=(VipsImageReader&&) noexcept;

    const VipsImageInfo& info() const noexcept { return info_; }
    std::uint32_t rows_read() const noexcept { return rows_read_; }

    // The next `count` rows, top to bottom, into out: count x width x 4 bytes of RGBA8.
    void read_rows(std::uint32_t count, std::span<std::uint8_t> out);

private:
    struct Pipeline;

    std::string path_;
    VipsImageInfo info_;
    std::unique_ptr<Pipeline> pipeline_;
    std::uint32_t rows_read_ = 0;
};

}  // namespace vtpage::bake
