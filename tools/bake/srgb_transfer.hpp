// The sRGB transfer function (IEC 61966-2-1) on 8-bit values, exactly: what a *_SRGB Vulkan format
// decodes before it filters, and what the bake uses to downsample sRGB colour in linear light.
// Tables, so that a level's texels cost a few lookups each: decoding is one, and encoding starts
// from the code a coarse table gives for the value's bucket and steps up past the codes' rounding
// thresholds (the linear light of code + 1/2), which gives round(255 * encode(linear)).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace vtpage::bake {

class SrgbTransfer {
public:
    // The one set of tables, made on first use (thread-safe).
    static const SrgbTransfer& tables();

    // The linear light (0 .. 1) of an 8-bit sRGB-encoded value.
    double to_linear(std::uint8_t encoded) const { return decoded_[encoded]; }

    // The 8-bit sRGB value nearest the encoding of `linear` (clamped to 0 .. 1).
    std::uint8_t to_srgb(double linear) const {
        const double clamped = linear > 0 ? (linear < 1 ? linear : 1) : 0;  // NaN reads as 0
        std::uint32_t code = first_code_[std::size_t(clamped * buckets)];
        while (code < 255 && thresholds_[code] <= clamped) ++code;
        return std::uint8_t(code);
    }

private:
    static constexpr std::size_t buckets = 4096;

    SrgbTransfer();

    std::array<double, 256> decoded_{};
    std::array<double, 255> thresholds_{};                // code k rounds up to k + 1 from here
    std::array<std::uint8_t, buckets + 1> first_code_{};  // the code at each bucket's start
};

}  // namespace vtpage::bake
