#include "page_pattern.hpp"

#include <algorithm>
#include <numeric>

#include "zipf_distribution.hpp"

namespace vtpage::stress {

namespace {

class UniformPattern final : public PagePattern {
public:
    explicit UniformPattern(std::uint64_t pages) : pick_(0, pages - 1) {}
    PageIndex next(std::mt19937_64& random) override { return pick_(random); }

private:
    std::uniform_int_distribution<std::uint64_t> pick_;
};

// Ranks scattered over the region by a bijection (multiplication by a number coprime to the
// page count), so that hot pages are not neighbours.
class ZipfPattern final : public PagePattern {
public:
    ZipfPattern(std::uint64_t pages, double skew) : zipf_(pages, skew), pages_(pages) {
        multiplier_ = std::max<std::uint64_t>(1, pages / 16 * 10 + 1) | 1;  // about 0.62 n
        while (std::gcd(multiplier_, pages) != 1) multiplier_ += 2;
        offset_ = pages / 3;
    }
    PageIndex next(std::mt19937_64& random) override {
        // rank and multiplier are below the page count (at most 2^25 pages of 2 MiB in
        // 64 TiB): the product fits.
        const std::uint64_t rank = zipf_(random) - 1;
        return (rank * multiplier_ + offset_) % pages_;
    }

private:
    ZipfDistribution zipf_;
    std::uint64_t pages_;
    std::uint64_t multiplier_ = 1;
    std::uint64_t offset_ = 0;
};

class SweepPattern final : public PagePattern {
public:
    SweepPattern(std::uint64_t span, SharedCursor cursor)
        : span_(span), cursor_(std::move(cursor)) {}
    PageIndex next(std::mt19937_64&) override { return cursor_->fetch_add(1) % span_; }

private:
    std::uint64_t span_;
    SharedCursor cursor_;
};

class BurstyPattern final : public PagePattern {
public:
    BurstyPattern(std::uint64_t pages, std::uint64_t budget) : pages_(pages) {
        hot_size_ = std::clamp<std::uint64_t>(budget / 2, 1, pages);
    }
    PageIndex next(std::mt19937_64& random) override {
        if (left_in_phase_ == 0) {
            storm_ = !storm_;
            if (!storm_) {  // calm again, somewhere else
                hot_start_ =
                    std::uniform_int_distribution<std::uint64_t>(0, pages_ - hot_size_)(random);
            }
            // Calm phases are long, storms are short bursts.
            left_in_phase_ = storm_ ? 32 + random() % 224 : 256 + random() % 1792;
        }
        --left_in_phase_;
        if (storm_) return std::uniform_int_distribution<std::uint64_t>(0, pages_ - 1)(random);
        return hot_start_ + std::uniform_int_distribution<std::uint64_t>(0, hot_size_ - 1)(random);
    }

private:
    std::uint64_t pages_;
    std::uint64_t hot_size_ = 1;
    std::uint64_t hot_start_ = 0;
    std::uint64_t left_in_phase_ = 0;
    bool storm_ = true;  // the first phase switch makes it calm
};

}  // namespace

std::string_view to_string(PatternKind kind) noexcept {
    switch (kind) {
        case PatternKind::uniform:
            return "uniform";
        case PatternKind::zipf:
            return "zipf";
        case PatternKind::scan:
            return "scan";
        case PatternKind::thrash:
            return "thrash";
        case PatternKind::bursty:
            return "bursty";
    }
    return "?";
}

std::vector<PatternKind> all_patterns() {
    return {PatternKind::uniform, PatternKind::zipf, PatternKind::scan, PatternKind::thrash,
            PatternKind::bursty};
}

bool pattern_from_string(std::string_view name, PatternKind& kind) {
    for (PatternKind candidate : all_patterns()) {
        if (to_string(candidate) == name) {
            kind = candidate;
            return true;
        }
    }
    return false;
}

std::uint64_t sweep_span(PatternKind kind, const PatternSpace& space) {
    switch (kind) {
        case PatternKind::scan:
            return std::min(space.page_count, 4 * space.budget_pages);
        case PatternKind::thrash:
            return std::min(space.page_count, space.budget_pages + 1);
        default:
            return space.page_count;
    }
}

std::unique_ptr<PagePattern> make_pattern(PatternKind kind, const PatternSpace& space,
                                          const SharedCursor& cursor) {
    switch (kind) {
        case PatternKind::uniform:
            return std::make_unique<UniformPattern>(space.page_count);
        case PatternKind::zipf:
            return std::make_unique<ZipfPattern>(space.page_count, space.zipf_skew);
        case PatternKind::scan:
        case PatternKind::thrash:
            return std::make_unique<SweepPattern>(sweep_span(kind, space), cursor);
        case PatternKind::bursty:
            return std::make_unique<BurstyPattern>(space.page_count, space.budget_pages);
    }
    return nullptr;
}

}  // namespace vtpage::stress
