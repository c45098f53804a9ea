#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "page_pattern.hpp"
#include "zipf_distribution.hpp"

namespace vtpage::stress {
namespace {

double zipf_probability(std::uint64_t rank, std::uint64_t n, double skew) {
    double total = 0;
    for (std::uint64_t k = 1; k <= n; ++k) total += std::pow(double(k), -skew);
    return std::pow(double(rank), -skew) / total;
}

class ZipfTest : public testing::TestWithParam<double> {};

TEST_P(ZipfTest, RankFrequenciesFollowThePowerLaw) {
    const double skew = GetParam();
    const std::uint64_t n = 1000;
    ZipfDistribution zipf(n, skew);
    std::mt19937_64 random(42);
    const int draws = 200000;
    std::map<std::uint64_t, int> seen;
    for (int i = 0; i < draws; ++i) {
        const std::uint64_t rank = zipf(random);
        ASSERT_GE(rank, 1u);
        ASSERT_LE(rank, n);
        ++seen[rank];
    }
    for (std::uint64_t rank : {1, 2, 3, 10, 50}) {
        const double expected = zipf_probability(rank, n, skew) * draws;
        // Five standard deviations of a binomial count, plus a little.
        const double tolerance = 5 * std::sqrt(expected) + 0.01 * expected;
        EXPECT_NEAR(seen[rank], expected, tolerance) << "rank " << rank << ", skew " << skew;
    }
}

INSTANTIATE_TEST_SUITE_P(Skews, ZipfTest, testing::Values(0.5, 0.99, 1.0, 1.5));

TEST(Zipf, OneRankAndHugeRangesWork) {
    std::mt19937_64 random(1);
    ZipfDistribution one(1, 1.2);
    EXPECT_EQ(one(random), 1u);
    ZipfDistribution huge(std::uint64_t(1) << 25, 0.99);  // every page of 64 TiB
    for (int i = 0; i < 1000; ++i) {
        const auto rank = huge(random);
        EXPECT_GE(rank, 1u);
        EXPECT_LE(rank, std::uint64_t(1) << 25);
    }
    EXPECT_THROW(ZipfDistribution(0, 1.0), Error);
    EXPECT_THROW(ZipfDistribution(10, 0.0), Error);
}

PatternSpace space() { return {100000, 64, 0.99}; }

TEST(PagePattern, NamesRoundTrip) {
    for (PatternKind kind : all_patterns()) {
        PatternKind back;
        ASSERT_TRUE(pattern_from_string(to_string(kind), back));
        EXPECT_EQ(back, kind);
    }
    PatternKind unused;
    EXPECT_FALSE(pattern_from_string("sideways", unused));
}

TEST(PagePattern, EveryPatternStaysInsideTheRegion) {
    std::mt19937_64 random(3);
    for (PatternKind kind : all_patterns()) {
        auto pattern = make_pattern(kind, space(), std::make_shared<std::atomic<std::uint64_t>>(0));
        for (int i = 0; i < 20000; ++i) {
            ASSERT_LT(pattern->next(random), space().page_count) << to_string(kind);
        }
    }
}

TEST(PagePattern, ScanAndThrashSweepInOrderAcrossThreads) {
    std::mt19937_64 random(3);
    auto cursor = std::make_shared<std::atomic<std::uint64_t>>(0);
    // Two workers share the cursor: together they visit every page of the span in order.
    auto a = make_pattern(PatternKind::scan, space(), cursor);
    auto b = make_pattern(PatternKind::scan, space(), cursor);
    const std::uint64_t span = sweep_span(PatternKind::scan, space());
    EXPECT_EQ(span, 4 * space().budget_pages);  // larger than the budget
    for (std::uint64_t i = 0; i < 2 * span; ++i) {
        EXPECT_EQ((i % 2 ? b : a)->next(random), i % span);
    }
    EXPECT_EQ(sweep_span(PatternKind::thrash, space()), space().budget_pages + 1);
    auto thrash =
        make_pattern(PatternKind::thrash, space(), std::make_shared<std::atomic<std::uint64_t>>(0));
    std::set<PageIndex> working_set;
    for (int i = 0; i < 1000; ++i) working_set.insert(thrash->next(random));
    EXPECT_EQ(working_set.size(), space().budget_pages + 1);
}

// How many distinct pages 10000 draws touch: the hot patterns touch far fewer than uniform.
std::size_t distinct_pages(PatternKind kind) {
    std::mt19937_64 random(9);
    auto pattern = make_pattern(kind, space(), std::make_shared<std::atomic<std::uint64_t>>(0));
    std::set<PageIndex> pages;
    for (int i = 0; i < 10000; ++i) pages.insert(pattern->next(random));
    return pages.size();
}

TEST(PagePattern, ZipfAndBurstyHaveHotSetsUniformHasNone) {
    const std::size_t uniform = distinct_pages(PatternKind::uniform);
    EXPECT_GT(uniform, 9000u);
    EXPECT_LT(distinct_pages(PatternKind::zipf), uniform / 2);
    EXPECT_LT(distinct_pages(PatternKind::bursty), uniform / 2);
}

TEST(PagePattern, ZipfScattersItsHotPages) {
    std::mt19937_64 random(5);
    auto pattern = make_pattern(PatternKind::zipf, space(), nullptr);
    std::map<PageIndex, int> hits;
    for (int i = 0; i < 20000; ++i) ++hits[pattern->next(random)];
    std::vector<std::pair<int, PageIndex>> by_count;
    for (auto [page, count] : hits) by_count.push_back({count, page});
    std::sort(by_count.rbegin(), by_count.rend());
    // The two hottest pages are not neighbours.
    const auto first = by_count[0].second, second = by_count[1].second;
    EXPECT_GT(first > second ? first - second : second - first, 1u);
}

}  // namespace
}  // namespace vtpage::stress
