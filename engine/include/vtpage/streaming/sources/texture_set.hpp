// Several virtual textures in one page table region. Each texture gets a run of consecutive
// pages, starting at its base page: page p of its layout (TextureLayout) is global page
// base + p. Textures are numbered 0, 1, 2 ... in the order they are added, the number the
// feedback entries and the shaders use.
//
//   TextureSet set(table.page_count());
//   auto id = set.add(std::make_shared<ProceduralSource>(ProceduralSettings{.seed = 7}));
//   PageIndex page = set.global_page(id, set.layout(id).locate(mip, x, y).page);
//   auto where = set.find(page);   // -> texture, mip, page within the mip
//
// Thread-safe: textures may be added while others are looked up. Textures are never removed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "vtpage/core/virtual_region.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt {

using TextureId = std::uint32_t;

struct TextureInfo {
    TextureId id = 0;
    PageIndex base_page = 0;  // global page of the texture's layout page 0
    TextureLayout layout;
    TextureLayout source_layout;  // the layout its source's pages are numbered in (untiled)
    std::shared_ptr<const TileSource> source;
};

// What a global page holds.
struct PageOwner {
    TextureId texture = 0;
    std::uint64_t layout_page = 0;  // page within the texture (global - base)
    PagePosition position;          // mip and page (x, y) within the mip; the tail is (0, 0)
    bool tail = false;              // the packed mip tail page
    // Where its bytes are in the source's pages (source_location): the page layout_page of the
    // source, whole, but in tile levels, where the page is one tile of a source page.
    TileLocation source;
};

class TextureSet {
public:
    // Textures are placed in global pages [first_page, first_page + page_capacity).
    explicit TextureSet(std::uint64_t page_capacity, PageIndex first_page = 0);
    ~TextureSet();
    TextureSet(const TextureSet&) = delete;
    TextureSet& operator=(const TextureSet&) = delete;

    // Adds a texture of the source's shape. invalid_argument for a null source or a shape that
    // is not valid(); out_of_memory when its pages do not fit the capacity left; out_of_range
    // past FeedbackEntry::max_textures textures.
    TextureId add(std::shared_ptr<const TileSource> source);

    std::size_t texture_count() const;
    // out_of_range for an unknown texture.
    TextureInfo info(TextureId texture) const;
    PageIndex base_page(TextureId texture) const;
    TextureLayout layout(TextureId texture) const;
    std::shared_ptr<const TileSource> source(TextureId texture) const;

    // base + layout_page; out_of_range when the page is past the texture.
    PageIndex global_page(TextureId texture, std::uint64_t layout_page) const;
    // The page holding a tile; out_of_range for a tile outside the texture.
    PageIndex global_page(const TileId& tile) const;
    // The global page of the texture's mip tail (kept resident by the streamer).
    PageIndex tail_page(TextureId texture) const;
    // The page of the next coarser mip covering the centre of the page's area (parent_page);
    // nullopt for a tail page.
    std::optional<PageIndex> parent(PageIndex global_page) const;
    // Reverse lookup; nullopt for a page that belongs to no texture.
    std::optional<PageOwner> find(PageIndex global_page) const;

    // Pages in use: the end of the last texture, relative to first_page.
    std::uint64_t pages_used() const;
    std::uint64_t page_capacity() const noexcept { return capacity_; }
    PageIndex first_page() const noexcept { return first_page_; }

private:
    struct State;
    std::unique_ptr<State> state_;
    std::uint64_t capacity_;
    PageIndex first_page_;
};

}  // namespace vtpage::vt
