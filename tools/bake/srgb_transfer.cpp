#include "srgb_transfer.hpp"

#include <cmath>

namespace vtpage::bake {

namespace {

// The transfer function's inverse on the continuous range 0 .. 1.
double decode(double encoded) {
    return encoded <= 0.04045 ? encoded / 12.92 : std::pow((encoded + 0.055) / 1.055, 2.4);
}

}  // namespace

SrgbTransfer::SrgbTransfer() {
    for (std::size_t i = 0; i < decoded_.size(); ++i) decoded_[i] = decode(double(i) / 255.0);
    for (std::size_t k = 0; k < thresholds_.size(); ++k) {
        thresholds_[k] = decode((double(k) + 0.5) / 255.0);
    }
    // Encoding is monotonic: the nearest code of a value is the count of thresholds at or below
    // it, and at a bucket's start that count is a lower bound for the whole bucket.
    std::uint32_t code = 0;
    for (std::size_t b = 0; b <= buckets; ++b) {
        const double start = double(b) / buckets;
        while (code < 255 && thresholds_[code] <= start) ++code;
        first_code_[b] = std::uint8_t(code);
    }
}

const SrgbTransfer& SrgbTransfer::tables() {
    static const SrgbTransfer transfer;
    return transfer;
}

}  // namespace vtpage::bake
