// Which virtual pages the workers touch, in which order: the access patterns of the stress
// tool. One generator per worker thread; scan and thrash share a cursor among the threads, so
// that together they sweep the pages in order.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "vtpage/core/virtual_region.hpp"

namespace vtpage::stress {

enum class PatternKind { uniform, zipf, scan, thrash, bursty };

std::string_view to_string(PatternKind kind) noexcept;
// All patterns, in the order "--pattern all" runs them.
std::vector<PatternKind> all_patterns();
// The kind named; false for an unknown name.
bool pattern_from_string(std::string_view name, PatternKind& kind);

struct PatternSpace {
    std::uint64_t page_count = 0;    // pages in the region
    std::uint64_t budget_pages = 0;  // pages the table may hold
    double zipf_skew = 0.99;
};

class PagePattern {
public:
    virtual ~PagePattern() = default;
    virtual PageIndex next(std::mt19937_64& random) = 0;
};

// The cursor that scan and thrash share among the workers of one run.
using SharedCursor = std::shared_ptr<std::atomic<std::uint64_t>>;

// uniform: any page of the region, equally likely.
// zipf: page ranks drawn with probability proportional to 1 / rank^skew, ranks scattered over
//   the region (a few hot pages, a long cold tail).
// scan: pages in order over a span of 4x the budget, again and again (every access misses
//   under LRU).
// thrash: pages in order over a working set of the budget plus one page.
// bursty: phases of calm (a hot window of half the budget, mostly hits) and storms (bursts
//   of misses over the whole region); the hot window moves after each storm.
std::unique_ptr<PagePattern> make_pattern(PatternKind kind, const PatternSpace& space,
                                          const SharedCursor& cursor);

// The span scan and thrash sweep (for the docs and the report).
std::uint64_t sweep_span(PatternKind kind, const PatternSpace& space);

}  // namespace vtpage::stress
