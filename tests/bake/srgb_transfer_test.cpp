// The bake's sRGB tables against the transfer function computed straight from its definition
// (support/reference_levels.hpp): decoding every code, and encoding a dense sweep of linear light
// to the nearest code.
#include "srgb_transfer.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../support/reference_levels.hpp"

namespace vtpage::bake {
namespace {

TEST(SrgbTransfer, DecodesEveryCodeAndEncodesItBack) {
    const SrgbTransfer& srgb = SrgbTransfer::tables();
    for (unsigned code = 0; code < 256; ++code) {
        const double linear = srgb.to_linear(std::uint8_t(code));
        EXPECT_DOUBLE_EQ(linear, test::reference_srgb_decode(std::uint8_t(code))) << code;
        EXPECT_EQ(srgb.to_srgb(linear), code);
    }
    EXPECT_EQ(srgb.to_linear(0), 0.0);
    EXPECT_EQ(srgb.to_linear(255), 1.0);
}

TEST(SrgbTransfer, EncodesToTheNearestCode) {
    const SrgbTransfer& srgb = SrgbTransfer::tables();
    unsigned differ = 0;
    for (unsigned i = 0; i <= 1000000; ++i) {
        const double linear = i / 1000000.0;
        const std::uint8_t want = test::reference_srgb_encode(linear);
        if (srgb.to_srgb(linear) == want) continue;
        // Only where the two computations of a rounding threshold part by a rounding error.
        const double encoded =
            linear <= 0.0031308 ? 12.92 * linear : 1.055 * std::pow(linear, 1 / 2.4) - 0.055;
        EXPECT_NEAR(std::fmod(encoded * 255, 1.0), 0.5, 1e-6) << linear;
        ++differ;
    }
    EXPECT_LE(differ, 2u);
    EXPECT_EQ(srgb.to_srgb(-0.5), 0);
    EXPECT_EQ(srgb.to_srgb(2.0), 255);
    EXPECT_EQ(srgb.to_srgb(std::nan("")), 0);
    EXPECT_EQ(srgb.to_srgb(0.5), 188);  // the mean of black and white
}

}  // namespace
}  // namespace vtpage::bake
