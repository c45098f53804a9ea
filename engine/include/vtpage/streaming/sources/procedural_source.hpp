// The procedural tile source: terrain-like colour from procedural_pattern.hpp, the same bytes
// from the CPU (fill_host) and from a CUDA kernel (fill_device). Cheap to make: one per texture,
// told apart by the seed. In RGBA8, BC1 or BC3 tiles: the same texel at the same place of a level
// in each, cut into the format's tiles; BC1 and BC3 encode each 4 x 4 block with
// encode_bc1_block and encode_bc3_block (the terrain is opaque: BC3's alpha blocks are constant).
#pragma once

#include <cstdint>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

struct ProceduralSettings {
    std::uint32_t seed = 1;
    std::uint32_t size_log2 = 16;           // 64Ki x 64Ki texels
    TileFormat format = TileFormat::rgba8;  // rgba8, bc1 or bc3
};

class ProceduralSource final : public TileSource {
public:
    // invalid_argument for size_log2 > max_size_log2 or a format other than rgba8, bc1 and bc3.
    explicit ProceduralSource(ProceduralSettings settings = {});

    TextureShape shape() const noexcept override {
        const std::uint32_t size = 1u << settings_.size_log2;
        return {size, size, settings_.format};
    }
    std::uint32_t seed() const noexcept { return settings_.seed; }
    std::string name() const override;
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override;
    bool fills_device() const noexcept override;
    // One kernel launch per 96 pages; a block per 128 x 128 texels of a tile (one RGBA8 tile,
    // a quarter of a BC1 or BC3 tile).
    void fill_device(std::span<const DevicePageFill> fills,
                     DeviceFillContext& context) const override;

    // One tile of a mip level in the source's format (the format's tile_bytes: RGBA8 rows of
    // 128 texels, or BC1 or BC3 blocks row by row); tiles outside the level are zero. What
    // fill_host writes for each tile of a page.
    void fill_tile(std::uint32_t mip, std::uint32_t tile_x, std::uint32_t tile_y,
                   std::span<std::byte> destination) const;

private:
    ProceduralSettings settings_;
};

}  // namespace vtpage::vt
