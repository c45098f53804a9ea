// Screenshots of the renderer's colour image (CompletedFrame::colour) as PNG files.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace vtpage::viewer {

// Writes RGBA8 pixels, rows from the top, as a PNG. invalid_argument when the span does not hold
// width * height pixels, io_error when the file cannot be written.
void write_png(const std::string& path, std::uint32_t width, std::uint32_t height,
               std::span<const std::uint8_t> rgba);

}  // namespace vtpage::viewer
