#include "tile_quality.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vtpage::bake {

namespace {

// The channels each format keeps, bit c for channel c.
std::uint32_t kept_channels(vt::TileFormat format) {
    switch (format) {
        case vt::TileFormat::bc1:
            return 0b0111;
        case vt::TileFormat::bc4:
            return 0b0001;
        case vt::TileFormat::bc5:
            return 0b0011;
        default:
            return 0b1111;
    }
}

}  // namespace

double LevelQuality::psnr() const {
    if (exact() || samples == 0) return std::numeric_limits<double>::infinity();
    const double mean = squared_error / double(samples);
    return 10.0 * std::log10(255.0 * 255.0 / mean);
}

TileQuality::TileQuality(const vt::TextureLayout& layout)
    : layout_(layout), channel_mask_(kept_channels(layout.format)) {
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        levels_.push_back({mip, layout.mips[mip].width, layout.mips[mip].height, 0, 0});
    }
}

void TileQuality::add(std::uint32_t mip, std::uint32_t x, std::uint32_t y,
                      std::span<const std::uint8_t> source, std::span<const std::uint8_t> decoded) {
    const vt::TileFormatInfo info = layout_.tile_format();
    const std::uint32_t payload = info.tile_payload(), border = info.tile_border;
    const vt::MipLevel& level = layout_.mips[mip];
    // The payload texels inside the level: the rest repeat texels counted elsewhere.
    const std::uint32_t columns = std::min(payload, level.width - x * payload);
    const std::uint32_t rows = std::min(payload, level.height - y * payload);
    std::uint64_t error = 0, samples = 0;
    for (std::uint32_t ty = border; ty < border + rows; ++ty) {
        const std::size_t row = std::size_t(ty) * info.tile_size;
        for (std::uint32_t tx = border; tx < border + columns; ++tx) {
            const std::size_t texel = (row + tx) * 4;
            for (std::uint32_t c = 0; c < 4; ++c) {
                if (!(channel_mask_ >> c & 1)) continue;
                const int d = int(source[texel + c]) - int(decoded[texel + c]);
                error += std::uint64_t(d * d);
                ++samples;
            }
        }
    }
    std::lock_guard lock(mutex_);
    levels_[mip].squared_error += double(error);
    levels_[mip].samples += samples;
}

std::vector<LevelQuality> TileQuality::levels() const {
    std::lock_guard lock(mutex_);
    return levels_;
}

}  // namespace vtpage::bake
