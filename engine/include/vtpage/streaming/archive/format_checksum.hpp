// The checksums of vtpage's file formats. Version 1 (baked texture files) and version 2 (page
// archives) use checksum64, vtpage's own 64-bit hash; version 3 uses XXH3-64 (seed 0), which
// xxhsum -H3 and Python's xxhash module compute too, so that a user can check a page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vtpage::vt {

// XXH3_64bits of the bytes (libxxhash, seed 0).
std::uint64_t xxh3_64(std::span<const std::byte> bytes) noexcept;

// The checksum of a page archive of this format version: checksum64 for version 2, xxh3_64
// from version 3 on. The version must be one that PageArchive reads (2 or 3).
std::uint64_t archive_checksum(std::uint32_t version, std::span<const std::byte> bytes) noexcept;

}  // namespace vtpage::vt
