// The BC3 encoder as compiled in a C++17 translation unit (the standard nvcc builds device
// code as), so that a test can compare its bytes with the C++20 build's.
#pragma once

#include <cstdint>

namespace vtpage::test {

void encode_bc3_block_as_cxx17(const std::uint8_t* texels, std::uint32_t row_pitch,
                               std::uint8_t* out);

}  // namespace vtpage::test
