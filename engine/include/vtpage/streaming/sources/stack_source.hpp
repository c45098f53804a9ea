// A material stack made of its layers' own sources (tile_stack.hpp): the layers' textures, one
// per material slot, become the layers of one virtual texture whose pages hold, tile by tile,
// every layer's blocks of a 4 x 4 texel block side by side. The streamer sees one texture: one
// feedback entry, one page and one indirection entry for all layers of a place.
//
// A stack page covers a block of tiles that lies inside one page of each layer (the stack's page
// grid divides theirs), so a fill reads one page of each layer and interleaves the tiles it
// needs; a LayerPageCache keeps the layer pages for the neighbouring stack pages a view asks for
// together.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

// Layer pages read for stack fills and kept for the stack pages next to them (a layer page
// covers up to 4 stack pages): the least recently used go first past the capacity. Thread-safe;
// one cache may serve every stack of a scene, so that the memory it keeps is bounded once.
class LayerPageCache {
public:
    // capacity_pages >= 1 pages of page_bytes each.
    explicit LayerPageCache(std::size_t capacity_pages);
    ~LayerPageCache();
    LayerPageCache(const LayerPageCache&) = delete;
    LayerPageCache& operator=(const LayerPageCache&) = delete;

    // Page `page` of `source`, read with fill_host where it is not kept.
    std::shared_ptr<const std::vector<std::byte>> page(
        const std::shared_ptr<const TileSource>& source, std::uint64_t page);

    std::size_t capacity_pages() const noexcept { return capacity_; }
    // Pages read from sources so far (a kept page handed out again is not a read).
    std::uint64_t pages_read() const;

private:
    struct Kept;
    const std::size_t capacity_;
    mutable std::mutex mutex_;  // guards kept_, clock_ and pages_read_
    std::vector<Kept> kept_;
    std::uint64_t clock_ = 0;
    std::uint64_t pages_read_ = 0;
};

struct StackSourceSettings {
    // Where layer pages are kept between fills; none: a cache of its own, two pages per layer.
    std::shared_ptr<LayerPageCache> cache;
};

class StackSource final : public TileSource {
public:
    // 1 to 4 layers, in the order the shader reads them: the same width and height, formats a
    // stack takes (bc1, bc3, bc4, bc5) and the same address modes. invalid_argument names the
    // layer and what differs.
    explicit StackSource(std::vector<std::shared_ptr<const TileSource>> layers,
                         StackSourceSettings settings = {});
    ~StackSource() override;

    TextureShape shape() const noexcept override { return shape_; }
    // The layers' address modes; layer l is sRGB where its source is (srgb_layers).
    TextureSampling sampling() const noexcept override { return sampling_; }
    std::string name() const override;
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override;

    std::size_t layer_count() const noexcept { return layers_.size(); }
    const TileSource& layer(std::size_t l) const { return *layers_.at(l); }
    const LayerPageCache& cache() const noexcept { return *cache_; }

private:
    void interleave_tile(std::size_t l, const std::byte* layer_tile, std::byte* stack_tile) const;

    std::vector<std::shared_ptr<const TileSource>> layers_;
    std::vector<TextureLayout> layer_layouts_;
    TextureShape shape_;
    TextureLayout layout_;
    TextureSampling sampling_;
    std::shared_ptr<LayerPageCache> cache_;
};

}  // namespace vtpage::vt
