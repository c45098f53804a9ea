#include "vtpage/streaming/archive/format_checksum.hpp"

#include <xxhash.h>

#include "vtpage/streaming/archive/checksum64.hpp"

namespace vtpage::vt {

std::uint64_t xxh3_64(std::span<const std::byte> bytes) noexcept {
    return XXH3_64bits(bytes.data(), bytes.size());
}

std::uint64_t archive_checksum(std::uint32_t version, std::span<const std::byte> bytes) noexcept {
    return version >= 3 ? xxh3_64(bytes) : checksum64(bytes);
}

}  // namespace vtpage::vt
