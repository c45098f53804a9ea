// The bake tool's input: an image file read whole and decoded into RGBA8, bounded before any
// large allocation. It is the part of the tool that meets untrusted bytes, so it is a function
// of its own: the tool and the image fuzz target (tests/fuzz) both call it.
//
// Errors (vtpage::Error): a file that cannot be read, or is not a regular file (a FIFO would
// block, a device never end), is io_error; a file or image over the limits is invalid_argument;
// bytes that are no PNG or JPEG stb_image can decode are corrupt_data.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vtpage/streaming/baked_texture.hpp"

namespace vtpage::bake {

struct ImageLimits {
    std::uint64_t max_file_bytes = std::uint64_t(1) << 30;
    std::uint32_t max_side = 1u << vt::max_size_log2;   // texels, either side
    std::uint64_t max_texels = std::uint64_t(1) << 32;  // width * height (16 GiB as RGBA8)
};

struct ImageSize {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
};

// The bytes of a regular file, at most limits.max_file_bytes of them. Opened without blocking,
// so that a FIFO or a device is refused rather than waited on.
std::vector<std::uint8_t> read_image_file(const std::string& path, const ImageLimits& limits);

// The image's width and height from its header alone (nothing is decoded), within limits.
ImageSize image_size(std::span<const std::uint8_t> bytes, const ImageLimits& limits);

// Decodes the image into RGBA8 (4 bytes a texel), after image_size has checked its shape.
vt::RgbaImage decode_image(std::span<const std::uint8_t> bytes, const ImageLimits& limits);

}  // namespace vtpage::bake
