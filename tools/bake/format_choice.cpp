#include "format_choice.hpp"

#include "vtpage/base/error.hpp"

namespace vtpage::bake {

std::optional<vt::TileFormat> parse_format(std::string_view name) {
    if (name == "auto") return std::nullopt;
    for (std::uint32_t value = 0; value < vt::tile_format_count; ++value) {
        if (name == vt::tile_format_name(vt::TileFormat(value))) return vt::TileFormat(value);
    }
    throw Error(Errc::invalid_argument, "parse_format",
                detail::concat("unknown format '", name, "': rgba8, bc1, bc3, bc4, bc5 or auto"));
}

FormatChoice choose_format(std::optional<vt::TileFormat> asked, const VipsImageInfo& image) {
    if (asked) return {*asked, "as asked"};
    if (image.has_alpha) return {vt::TileFormat::bc3, "auto: the image has alpha"};
    if (image.bands == 1) return {vt::TileFormat::bc4, "auto: one grey channel"};
    return {vt::TileFormat::bc1, "auto: colour without alpha"};
}

}  // namespace vtpage::bake
