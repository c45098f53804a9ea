#include "vtpage/streaming/sources/stack_source.hpp"

#include <algorithm>
#include <cstring>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

struct LayerPageCache::Kept {
    std::shared_ptr<const TileSource> source;  // held, so that its address names it alone
    std::uint64_t page = 0;
    std::uint64_t last_use = 0;
    std::shared_ptr<const std::vector<std::byte>> bytes;
};

LayerPageCache::LayerPageCache(std::size_t capacity_pages) : capacity_(capacity_pages) {
    if (capacity_pages == 0) {
        throw Error(Errc::invalid_argument, "LayerPageCache", "keeps at least one page",
                    "capacity_pages=0");
    }
}

LayerPageCache::~LayerPageCache() = default;

std::shared_ptr<const std::vector<std::byte>> LayerPageCache::page(
    const std::shared_ptr<const TileSource>& source, std::uint64_t page) {
    {
        std::lock_guard lock(mutex_);
        for (Kept& kept : kept_) {
            if (kept.source == source && kept.page == page) {
                kept.last_use = ++clock_;
                return kept.bytes;
            }
        }
    }
    // Read without the lock: fills take milliseconds. Two threads may read the same page; the
    // second keeps its copy too, and the older one ages out.
    auto bytes = std::make_shared<std::vector<std::byte>>(page_bytes);
    source->fill_host(page, *bytes);
    std::lock_guard lock(mutex_);
    ++pages_read_;
    if (kept_.size() >= capacity_) {
        const auto oldest =
            std::min_element(kept_.begin(), kept_.end(),
                             [](const Kept& a, const Kept& b) { return a.last_use < b.last_use; });
        *oldest = Kept{source, page, ++clock_, bytes};
    } else {
        kept_.push_back(Kept{source, page, ++clock_, bytes});
    }
    return bytes;
}

std::uint64_t LayerPageCache::pages_read() const {
    std::lock_guard lock(mutex_);
    return pages_read_;
}

namespace {

constexpr const char* operation = "StackSource";

TileStack stack_of(const std::vector<std::shared_ptr<const TileSource>>& layers) {
    TileStack stack;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        stack.packed |= (std::uint32_t(layers[l]->shape().format) + 1u) << (4u * l);
    }
    return stack;
}

// Why layer l cannot join a stack whose first layer is `first`; empty where it can.
std::string layer_problem(const TileSource& layer, const TileSource& first) {
    const TextureShape shape = layer.shape();
    if (shape.stacked()) return "is a stack itself";
    if (!TileStack::layer_format_allowed(shape.format)) {
        return detail::concat("is ", tile_format_name(shape.format),
                              " (stack layers are bc1, bc3, bc4 or bc5)");
    }
    const TextureShape reference = first.shape();
    if (shape.width != reference.width || shape.height != reference.height) {
        return detail::concat("is ", shape.width, " x ", shape.height, ", the first layer ",
                              reference.width, " x ", reference.height);
    }
    const TextureSampling sampling = layer.sampling();
    if (sampling.address_u != first.sampling().address_u ||
        sampling.address_v != first.sampling().address_v) {
        return "wraps differently from the first layer";
    }
    return {};
}

}  // namespace

StackSource::StackSource(std::vector<std::shared_ptr<const TileSource>> layers,
                         StackSourceSettings settings)
    : layers_(std::move(layers)) {
    if (layers_.empty() || layers_.size() > max_stack_layers) {
        throw Error(Errc::invalid_argument, operation, "a stack has 1 to 4 layers",
                    detail::concat("layers=", layers_.size()));
    }
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        if (!layers_[l]) {
            throw Error(Errc::invalid_argument, operation, "a layer has no source",
                        detail::concat("layer=", l));
        }
        const std::string problem = layer_problem(*layers_[l], *layers_[0]);
        if (!problem.empty()) {
            throw Error(Errc::invalid_argument, operation,
                        detail::concat("layer ", l, " (", layers_[l]->name(), ") ", problem),
                        detail::concat("layer=", l));
        }
        layer_layouts_.push_back(layers_[l]->layout());
    }
    shape_ = TextureShape::stacked_shape(layers_[0]->shape().width, layers_[0]->shape().height,
                                         stack_of(layers_));
    layout_ = TextureLayout(shape_);
    sampling_ = layers_[0]->sampling();
    sampling_.srgb_layers = 0;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        if (layers_[l]->sampling().color_space == ColorSpace::srgb)
            sampling_.srgb_layers |= 1u << l;
    }
    cache_ = settings.cache ? std::move(settings.cache)
                            : std::make_shared<LayerPageCache>(2 * layers_.size());
}

StackSource::~StackSource() = default;

std::string StackSource::name() const {
    std::string name = "stack of ";
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        if (l > 0) name += " + ";
        name += layers_[l]->name();
    }
    return name;
}

void StackSource::interleave_tile(std::size_t l, const std::byte* layer_tile,
                                  std::byte* stack_tile) const {
    const std::uint32_t block = tile_format_info(shape_.stack.layer(std::uint32_t(l))).block_bytes;
    const std::uint32_t record = shape_.stack.record_bytes();
    const std::uint32_t offset = shape_.stack.layer_offset(std::uint32_t(l));
    const std::uint32_t blocks = layout_.tile_format().blocks_per_row();
    for (std::uint32_t b = 0; b < blocks * blocks; ++b) {
        std::memcpy(stack_tile + std::size_t(b) * record + offset,
                    layer_tile + std::size_t(b) * block, block);
    }
}

void StackSource::fill_host(std::uint64_t page, std::span<std::byte> destination) const {
    if (page >= layout_.page_count) {
        throw Error(Errc::out_of_range, "StackSource::fill_host", "no such page of the stack",
                    detail::concat("page=", page, " pages=", layout_.page_count));
    }
    if (destination.size() < page_bytes) {
        throw Error(Errc::invalid_argument, "StackSource::fill_host",
                    "the destination holds less than a page",
                    detail::concat("bytes=", destination.size()));
    }
    std::memset(destination.data(), 0, page_bytes);
    const TileFormatInfo info = layout_.tile_format();
    const PagePosition position = page_position(layout_, page);
    // The stack page's tiles: the tail's levels one by one, or a block of one level.
    struct Tile {
        std::uint32_t mip, x, y, slot;
    };
    std::vector<Tile> tiles;
    if (layout_.in_tail(position.mip)) {
        for (std::uint32_t mip = layout_.tail_first_mip; mip < layout_.mip_count; ++mip) {
            tiles.push_back({mip, 0, 0, mip - layout_.tail_first_mip});
        }
    } else {
        for (std::uint32_t y = 0; y < info.page_tiles_y; ++y) {
            for (std::uint32_t x = 0; x < info.page_tiles_x; ++x) {
                const std::uint32_t tx = position.x * info.page_tiles_x + x;
                const std::uint32_t ty = position.y * info.page_tiles_y + y;
                if (layout_.has_tile(position.mip, tx, ty)) {
                    tiles.push_back({position.mip, tx, ty, y * info.page_tiles_x + x});
                }
            }
        }
    }
    for (std::size_t l = 0; l < layers_.size(); ++l) {
        const TextureLayout& layer = layer_layouts_[l];
        // Every tile of the stack page lies in one page of the layer (the grids nest).
        const std::uint64_t layer_page = layer.locate(tiles[0].mip, tiles[0].x, tiles[0].y).page;
        const auto bytes = cache_->page(layers_[l], layer_page);
        for (const Tile& tile : tiles) {
            const TileLocation at = layer.locate(tile.mip, tile.x, tile.y);
            interleave_tile(l, bytes->data() + at.byte_offset(),
                            destination.data() + std::size_t(tile.slot) * info.tile_bytes());
        }
    }
}

}  // namespace vtpage::vt
