#include "renderer/vulkan_screenshot.hpp"

#include "vtpage/base/error.hpp"

// Static functions: another part of a program may carry its own copy of stb_image_write.
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace vtpage::viewer {

void write_png(const std::string& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::uint8_t> rgba) {
    const std::string arguments = detail::concat("path=", path, " ", width, "x", height);
    if (width == 0 || height == 0 || rgba.size() != std::size_t(width) * height * 4) {
        throw Error(Errc::invalid_argument, "write_png",
                    detail::concat("expected ", std::size_t(width) * height * 4, " bytes, got ",
                                   rgba.size()),
                    arguments);
    }
    if (!stbi_write_png(path.c_str(), int(width), int(height), 4, rgba.data(), int(width) * 4)) {
        throw Error(Errc::io_error, "write_png", "the PNG could not be written", arguments);
    }
}

}  // namespace vtpage::viewer
