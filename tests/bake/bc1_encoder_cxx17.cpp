// Built as C++17 with the warnings of every vtpage target: the encoder's header must stay valid
// there, and constant-evaluable.
#include "bc1_encoder_cxx17.hpp"

#include "streaming/sources/bc1_encoder.hpp"

static_assert(__cplusplus == 201703L, "this file checks the encoder as C++17");

namespace vtpage::test {

namespace {
constexpr std::uint8_t white_texels[64] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
constexpr vt::Bc1Block white = vt::encode_bc1_block(white_texels);
static_assert(white.bytes[0] == 0xff && white.bytes[1] == 0xff && white.bytes[2] == 0xfe &&
                  white.bytes[3] == 0xff && white.bytes[4] == 0 && white.bytes[7] == 0,
              "white is colour 0xffff, second endpoint 0xfffe, every texel index 0");
}  // namespace

void encode_bc1_block_as_cxx17(const std::uint8_t* texels, std::uint32_t row_pitch,
                               std::uint8_t* out) {
    vt::encode_bc1_block(texels, row_pitch, out);
}

}  // namespace vtpage::test
