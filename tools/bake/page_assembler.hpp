// Collects a texture's encoded tiles into pages and hands each page to the archive writer as
// soon as its last tile arrives, so that only the pages of the rows of tiles being encoded are in
// memory (a page row per level, and the tail page until its last level). Slots the layout leaves
// empty (past a level's edge, past the last tail level) stay zero bytes. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::bake {

class PageAssembler {
public:
    PageAssembler(const vt::TextureLayout& layout, vt::PageArchiveWriter& writer);

    // Tile (x, y) of mip's encoded bytes (tile_bytes of the format). invalid_argument for a tile
    // the layout does not have, one added twice or bytes of the wrong size.
    void add_tile(std::uint32_t mip, std::uint32_t x, std::uint32_t y,
                  std::span<const std::byte> bytes);
    // How many tiles of the layout land in a page (its slots that are not left empty).
    static std::uint32_t tiles_in_page(const vt::TextureLayout& layout, std::uint64_t page);
    std::uint64_t pages_written() const;
    std::uint64_t peak_pages_held() const;

private:
    struct Pending {
        std::vector<std::byte> bytes;
        std::vector<bool> filled;
        std::uint32_t remaining = 0;
    };

    vt::TextureLayout layout_;
    vt::PageArchiveWriter& writer_;
    mutable std::mutex mutex_;
    std::unordered_map<std::uint64_t, Pending> pending_;
    std::uint64_t pages_written_ = 0;
    std::uint64_t peak_pages_held_ = 0;
};

}  // namespace vtpage::bake
