// The tile format a bake uses: the one asked for, or with `auto` one chosen from what the image
// file holds: bc3 when it has alpha, bc4 for a single grey channel, bc1 otherwise.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vips_image_reader.hpp"
#include "vtpage/streaming/layout/tile_format.hpp"

namespace vtpage::bake {

struct FormatChoice {
    vt::TileFormat format = vt::TileFormat::bc1;
    std::string reason;  // "chosen: the image has alpha", or "asked for"
};

// "rgba8", "bc1", "bc3", "bc4", "bc5"; nullopt for "auto". invalid_argument for other names.
std::optional<vt::TileFormat> parse_format(std::string_view name);

FormatChoice choose_format(std::optional<vt::TileFormat> asked, const VipsImageInfo& image);

}  // namespace vtpage::bake
