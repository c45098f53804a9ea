// The procedural tile source: terrain-like colour from procedural_pattern.hpp, the same bytes
// from the CPU (fill_host) and from a CUDA kernel (fill_device). Cheap to make: one per texture,
// told apart by the seed.
#pragma once

#include <cstdint>

#include "vtpage/streaming/tile_source.hpp"

namespace vtpage::vt {

struct ProceduralSettings {
    std::uint32_t seed = 1;
    std::uint32_t size_log2 = 16;  // 64Ki x 64Ki texels
};

class ProceduralSource final : public TileSource {
public:
    // invalid_argument for size_log2 > max_size_log2.
    explicit ProceduralSource(ProceduralSettings settings = {});

    TextureShape shape() const noexcept override {
        return TextureShape::square(settings_.size_log2);
    }
    std::uint32_t seed() const noexcept { return settings_.seed; }
    std::string name() const override;
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override;
    bool fills_device() const noexcept override;
    // One kernel launch per 96 pages; a block per tile.
    void fill_device(std::span<const DevicePageFill> fills,
                     DeviceFillContext& context) const override;

    // One tile (tile_bytes, RGBA8 rows of 128 texels) of a mip level; tiles outside the level
    // are zero. What fill_host writes for each tile of a page.
    void fill_tile(std::uint32_t mip, std::uint32_t tile_x, std::uint32_t tile_y,
                   std::span<std::byte> destination) const;

private:
    ProceduralSettings settings_;
};

}  // namespace vtpage::vt
