#include "vtpage/streaming/archive/checksum64.hpp"

#include <cstring>

namespace vtpage::vt {

namespace {

constexpr std::uint64_t prime1 = 0x9e3779b185ebca87ull;
constexpr std::uint64_t prime2 = 0xc2b2ae3d27d4eb4full;
constexpr std::uint64_t prime3 = 0x165667b19e3779f9ull;

constexpr std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
constexpr std::uint64_t round_lane(std::uint64_t lane, std::uint64_t word) {
    return rotl(lane + word * prime2, 31) * prime1;
}

}  // namespace

std::uint64_t checksum64(std::span<const std::byte> bytes) noexcept {
    std::uint64_t lanes[4] = {prime1 + prime2, prime2, 0, 0 - prime1};
    const std::size_t words = bytes.size() / 8;
    const std::byte* data = bytes.data();
    std::size_t i = 0;
    for (; i + 4 <= words; i += 4) {
        for (int k = 0; k < 4; ++k) {
            std::uint64_t word;
            std::memcpy(&word, data + (i + k) * 8, 8);
            lanes[k] = round_lane(lanes[k], word);
        }
    }
    std::uint64_t h =
        rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18);
    for (; i < words; ++i) {
        std::uint64_t word;
        std::memcpy(&word, data + i * 8, 8);
        h = rotl(h ^ round_lane(0, word), 27) * prime1 + prime3;
    }
    for (std::size_t b = words * 8; b < bytes.size(); ++b) {
        h = rotl(h ^ (std::uint64_t(std::to_integer<std::uint8_t>(data[b])) * prime3), 11) * prime1;
    }
    h ^= std::uint64_t(bytes.size());
    h ^= h >> 33;
    h *= prime2;
    h ^= h >> 29;
    h *= prime3;
    h ^= h >> 32;
    return h;
}

}  // namespace vtpage::vt
