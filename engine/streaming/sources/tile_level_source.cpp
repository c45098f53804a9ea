#include "vtpage/streaming/sources/tile_level_source.hpp"

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

TileLevelSource::TileLevelSource(std::shared_ptr<const TileSource> source,
                                 std::uint32_t tile_levels)
    : source_(std::move(source)) {
    if (!source_) throw Error(Errc::invalid_argument, "TileLevelSource", "the source is null");
    shape_ = source_->shape();
    if (shape_.tile_levels != 0) {
        throw Error(Errc::invalid_argument, "TileLevelSource",
                    "the source already streams tile levels",
                    detail::concat("tile_levels=", shape_.tile_levels, ", source=", name()));
    }
    if (tile_levels > max_mips) {
        throw Error(Errc::invalid_argument, "TileLevelSource",
                    detail::concat("a texture has at most ", max_mips, " levels"),
                    detail::concat("tile_levels=", tile_levels, ", source=", name()));
    }
    shape_.tile_levels = tile_levels;
}

}  // namespace vtpage::vt
