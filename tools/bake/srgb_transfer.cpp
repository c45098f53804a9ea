#include "srgb_transfer.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace vtpage::bake {

namespace {

// The transfer function's inverse on the continuous range 0 .. 1.
double decode(double encoded) {
    return encoded <= 0.04045 ? encoded / 12.92 : std::pow((encoded + 0.055) / 1.055, 2.4);
}

const std::array<double, 256>& decoded_values() {
    static const std::array<double, 256> table = [] {
        std::array<double, 256> values{};
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = decode(double(i) / 255.0);
        return values;
    }();
    return table;
}

// The linear light at which the nearest code steps from k to k + 1: the decoding of k + 1/2.
// Encoding is monotonic, so the nearest code is the count of these at or below a value.
const std::array<double, 255>& rounding_thresholds() {
    static const std::array<double, 255> table = [] {
        std::array<double, 255> values{};
        for (std::size_t k = 0; k < values.size(); ++k)
            values[k] = decode((double(k) + 0.5) / 255.0);
        return values;
    }();
    return table;
}

}  // namespace

double srgb_to_linear(std::uint8_t encoded) { return decoded_values()[encoded]; }

std::uint8_t linear_to_srgb(double linear) {
    const auto& thresholds = rounding_thresholds();
    return std::uint8_t(std::upper_bound(thresholds.begin(), thresholds.end(), linear) -
                        thresholds.begin());
}

}  // namespace vtpage::bake
