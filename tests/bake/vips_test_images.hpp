// Image files for the bake tests, written through libvips itself, so that the tests need no
// files of their own and the command-line tool is not needed.
#pragma once

#include <vips/vips.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vtpage::test {

// Samples in memory, band-interleaved, one or two bytes a sample (as format says).
struct SampleImage {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint32_t bands = 0;
    VipsBandFormat format = VIPS_FORMAT_UCHAR;
    VipsInterpretation interpretation = VIPS_INTERPRETATION_sRGB;
    std::vector<std::uint8_t> bytes;
};

// A saver such as [](VipsImage* in, const char* path) { return vips_pngsave(in, path, nullptr); }
using Saver = std::function<int(VipsImage* image, const char* path)>;

// Writes the samples with the saver; throws std::runtime_error with libvips' message on failure.
void save_image(const SampleImage& image, const std::string& path, const Saver& saver);

// A width x height RGB TIFF (deflate, in strips) of a cheap pattern, made row by row by libvips:
// large images without large memory.
void save_pattern_tiff(const std::string& path, std::uint32_t width, std::uint32_t height);

// Whether this libvips has an operation of that name ("webpsave", ...).
bool has_vips_operation(const char* name);

}  // namespace vtpage::test
