// How close a format's encoded tiles come to the texels they were made from, per mip level: the
// squared error over the channels the format keeps (RGB for bc1, RGBA for bc3 and rgba8, R for
// bc4, RG for bc5), counted over each tile's payload texels that lie inside the level (the
// border and the clamped texels past the edge repeat texels counted elsewhere). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::bake {

struct LevelQuality {
    std::uint32_t mip = 0;
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    double squared_error = 0;
    std::uint64_t samples = 0;

    bool exact() const { return squared_error == 0; }
    // Peak signal to noise ratio in dB, for 8-bit samples (infinite when exact).
    double psnr() const;
};

class TileQuality {
public:
    explicit TileQuality(const vt::TextureLayout& layout);

    // Compares the source tile (RGBA8, tile_size^2 texels) with its decoding, for tile (x, y).
    void add(std::uint32_t mip, std::uint32_t x, std::uint32_t y,
             std::span<const std::uint8_t> source, std::span<const std::uint8_t> decoded);
    std::vector<LevelQuality> levels() const;

private:
    vt::TextureLayout layout_;
    std::uint32_t channel_mask_;
    mutable std::mutex mutex_;
    std::vector<LevelQuality> levels_;
};

}  // namespace vtpage::bake
