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

std::vector<StoredPart> TileSource::split_stored(std::uint64_t,
                                                 std::span<const std::byte> stored) const {
    return {StoredPart{stored, 0, 0, page_bytes}};
}

void TileSource::decode_stored_part(std::uint64_t page, const StoredPart& part,
                                    std::span<std::byte> destination) const {
    decode_stored(page, part.stored, destination);
}

}  // namespace vtpage::vt
