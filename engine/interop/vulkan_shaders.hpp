// The SPIR-V of the library's own shaders (shaders/), compiled by glslc at build time and
// embedded here.
#pragma once

#include <cstdint>
#include <span>

namespace vtpage::interop_detail {

std::span<const std::uint32_t> indirection_scatter_compute_spirv();

}  // namespace vtpage::interop_detail
