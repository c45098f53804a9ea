// The example's own tile source for --stack: a repeating pattern in BC1 (sRGB colour) or BC4 (one
// linear channel) whose every 4 x 4 block is one value, so that the app encodes it exactly and
// checks its image without a decoder. It shows how an app implements vtpage::vt::TileSource: a
// page is a block of tiles, each tile's 4-texel border holds the texels beyond it as the
// texture's address mode (repeat) wraps them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace embedding {

class BlockPatternSource final : public vtpage::vt::TileSource {
public:
    // format: bc1 (an sRGB colour layer) or bc4 (a linear one); size texels per side, a power of
    // two >= 4.
    BlockPatternSource(vtpage::vt::TileFormat format, std::uint32_t size);

    vtpage::vt::TextureShape shape() const noexcept override;
    vtpage::vt::TextureSampling sampling() const noexcept override;
    std::string name() const override;
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override;

    // The RGBA8 value every texel of block (bx, by) of level `mip` decodes to (wrapped into the
    // level): as stored, sRGB-encoded for BC1.
    std::array<std::uint8_t, 4> block_value(std::uint32_t mip, std::int64_t bx,
                                            std::int64_t by) const;

private:
    vtpage::vt::TileFormat format_;
    std::uint32_t size_;
};

}  // namespace embedding
