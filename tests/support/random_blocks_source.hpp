// A tile source of any block-compressed format whose bytes are a hash of (seed, page, byte): any
// 8 or 16 bytes are a valid BC1/BC3/BC4/BC5 block, so every page decodes, and no two places of
// two sources look alike. For tests that compare how bytes travel (stacks, copies), not what
// they show: borders do not repeat the neighbours' texels.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::test {

class RandomBlocksSource final : public vt::TileSource {
public:
    RandomBlocksSource(vt::TextureShape shape, std::uint64_t seed,
                       vt::TextureSampling sampling = {})
        : shape_(shape), seed_(seed), sampling_(sampling) {}

    vt::TextureShape shape() const noexcept override { return shape_; }
    vt::TextureSampling sampling() const noexcept override { return sampling_; }
    std::string name() const override { return "random blocks " + std::to_string(seed_); }

    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override {
        if (page >= layout().page_count) {
            throw Error(Errc::out_of_range, "RandomBlocksSource::fill_host", "no such page");
        }
        for (std::uint64_t word = 0; word < vt::page_bytes / 8; ++word) {
            const std::uint64_t value = word_at(page, word);
            std::memcpy(destination.data() + word * 8, &value, 8);
        }
    }

    // The 8 bytes at byte 8 * word of a page.
    std::uint64_t word_at(std::uint64_t page, std::uint64_t word) const {
        std::uint64_t x = seed_ * 0x9E3779B97F4A7C15ull ^ (page << 20) ^ word;
        x ^= x >> 33;
        x *= 0xFF51AFD7ED558CCDull;
        x ^= x >> 33;
        x *= 0xC4CEB9FE1A85EC53ull;
        return x ^ (x >> 33);
    }

private:
    vt::TextureShape shape_;
    std::uint64_t seed_;
    vt::TextureSampling sampling_;
};

}  // namespace vtpage::test
