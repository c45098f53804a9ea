// Runs of consecutive virtual pages, the batches the benchmarks commit, publish and evict.
#pragma once

#include <numeric>
#include <vector>

#include "vtpage/core/page_table.hpp"

namespace vtpage::bench {

// Pages [first, first + count).
inline std::vector<PageIndex> page_range(PageIndex first, std::size_t count) {
    std::vector<PageIndex> pages(count);
    std::iota(pages.begin(), pages.end(), first);
    return pages;
}

}  // namespace vtpage::bench
