// The checksum of vtpage's file formats (baked textures, page archives): 64 bits, four
// interleaved multiply-rotate lanes (several GB/s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vtpage::vt {

std::uint64_t checksum64(std::span<const std::byte> bytes) noexcept;

}  // namespace vtpage::vt
