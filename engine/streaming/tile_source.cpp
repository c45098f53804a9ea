#include "vtpage/streaming/tile_source.hpp"

namespace vtpage::vt {

void TileSource::fill_device(std::span<const DevicePageFill>, DeviceFillContext&) const {
    throw Error(Errc::not_supported, "TileSource::fill_device",
                "this source fills host memory only", detail::concat("source=", name()));
}

}  // namespace vtpage::vt
