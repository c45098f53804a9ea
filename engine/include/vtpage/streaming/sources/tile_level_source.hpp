// A source streamed a tile at a time in its finest levels: the same pages as the source it
// wraps, under a shape with tile levels (texture_layout.hpp). The streamer then gives each tile
// of those levels its own indirection entry and a place in a page shared with other tiles, so
// that a view that samples one tile of a page makes that tile resident, not the page's 32.
//
//   auto source = std::make_shared<TileLevelSource>(baked, 1);  // mip 0 by tile
//   streamer.add_texture(source);
#pragma once

#include <cstdint>
#include <memory>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

class TileLevelSource final : public TileSource {
public:
    // invalid_argument for a null source, one that already has tile levels, or more tile levels
    // than a texture has levels (max_mips); levels of the tail are never streamed by tile.
    TileLevelSource(std::shared_ptr<const TileSource> source, std::uint32_t tile_levels);

    TextureShape shape() const noexcept override { return shape_; }
    TextureSampling sampling() const noexcept override { return source_->sampling(); }
    std::string name() const override { return source_->name(); }
    const std::shared_ptr<const TileSource>& wrapped() const noexcept { return source_; }

    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override {
        source_->fill_host(page, destination);
    }
    bool fills_device() const noexcept override { return source_->fills_device(); }
    void fill_device(std::span<const DevicePageFill> fills,
                     DeviceFillContext& context) const override {
        source_->fill_device(fills, context);
    }
    std::optional<StoredPageRead> stored_read(std::uint64_t page) const override {
        return source_->stored_read(page);
    }
    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override {
        source_->decode_stored(page, stored, destination);
    }
    std::vector<StoredPart> split_stored(std::uint64_t page,
                                         std::span<const std::byte> stored) const override {
        return source_->split_stored(page, stored);
    }
    void decode_stored_part(std::uint64_t page, const StoredPart& part,
                            std::span<std::byte> destination) const override {
        source_->decode_stored_part(page, part, destination);
    }

private:
    std::shared_ptr<const TileSource> source_;
    TextureShape shape_;
};

}  // namespace vtpage::vt
