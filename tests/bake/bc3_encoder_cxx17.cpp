// Built as C++17 with the warnings of every vtpage target: the encoder's header must stay valid
// there, and constant-evaluable.
#include "bc3_encoder_cxx17.hpp"

#include "streaming/sources/bc3_encoder.hpp"

static_assert(__cplusplus == 201703L, "this file checks the encoder as C++17");

namespace vtpage::test {

namespace {
// Opaque black: a constant alpha block, and BC1's black (0x0001 and 0x0000, every index 1).
constexpr std::uint8_t black_texels[64] = {0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255,
                                           0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255,
                                           0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255,
                                           0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255};
constexpr vt::Bc3Block black = vt::encode_bc3_block(black_texels);
static_assert(black.bytes[0] == 255 && black.bytes[1] == 255 && black.bytes[2] == 0 &&
                  black.bytes[7] == 0 && black.bytes[8] == 0x01 && black.bytes[10] == 0 &&
                  black.bytes[12] == 0x55 && black.bytes[15] == 0x55,
              "opaque black is alpha 255 throughout, colour 0x0001 and 0x0000, every index 1");
}  // namespace

void encode_bc3_block_as_cxx17(const std::uint8_t* texels, std::uint32_t row_pitch,
                               std::uint8_t* out) {
    vt::encode_bc3_block(texels, row_pitch, out);
}

}  // namespace vtpage::test
