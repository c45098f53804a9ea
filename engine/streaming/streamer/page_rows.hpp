// Part of a page: `rows` runs of `row_bytes`, `pitch` apart. A packed coarse level is its tile
// rows: each is copied from the level's own page to as far from the level's place in the page
// that holds it.
#pragma once

#include <cstdint>

namespace vtpage::vt {

struct PageRows {
    std::uint64_t row_bytes = 0;
    std::uint32_t rows = 0;
    std::uint64_t pitch = 0;

    // Calls copy(offset, bytes) for each row: offset from the page's start and from the
    // destination alike.
    template <class Copy>
    void for_each(Copy&& copy) const {
        for (std::uint32_t row = 0; row < rows; ++row) copy(row * pitch, row_bytes);
    }
};

}  // namespace vtpage::vt
