// Part of a page: `rows` runs of `row_bytes`, `pitch` apart. A packed coarse level is its tile
// rows: each is copied from the level's own page to as far from the level's place in the page
// that holds it. A tile of a tile level is one row, copied from its slot in its source's page.
#pragma once

#include <cstdint>

namespace vtpage::vt {

struct PageRows {
    std::uint64_t row_bytes = 0;
    std::uint32_t rows = 0;
    std::uint64_t pitch = 0;
    // Where the rows start in the page the source fills: 0 for a level (it starts its own page),
    // the tile's slot for a tile of a tile level.
    std::uint64_t source_offset = 0;

    // Calls copy(from, to, bytes) for each row: `from` from the source page's start, `to` from
    // the destination's.
    template <class Copy>
    void for_each(Copy&& copy) const {
        for (std::uint32_t row = 0; row < rows; ++row) {
            copy(source_offset + row * pitch, row * pitch, row_bytes);
        }
    }
    // Whether the rows read any of the source page's bytes [first, first + bytes).
    bool reads(std::uint64_t first, std::uint64_t bytes) const {
        for (std::uint32_t row = 0; row < rows; ++row) {
            const std::uint64_t from = source_offset + row * pitch;
            if (from < first + bytes && first < from + row_bytes) return true;
        }
        return false;
    }
};

}  // namespace vtpage::vt
