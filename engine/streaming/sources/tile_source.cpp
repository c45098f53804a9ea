#include "vtpage/streaming/sources/tile_source.hpp"

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

void TileSource::fill_device(std::span<const DevicePageFill>, DeviceFillContext&) const {
    throw Error(Errc::not_supported, "TileSource::fill_device",
                "this source fills host memory only", detail::concat("source=", name()));
}

std::optional<StoredPageRead> TileSource::stored_read(std::uint64_t) const { return std::nullopt; }

void TileSource::decode_stored(std::uint64_t page, std::span<const std::byte>,
                               std::span<std::byte>) const {
    throw Error(Errc::not_supported, "TileSource::decode_stored",
                "this source does not read stored pages",
                detail::concat("source=", name(), ", page=", page));
}

}  // namespace vtpage::vt
