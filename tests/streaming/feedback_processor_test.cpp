#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "streaming_test_support.hpp"
#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/sources/tile_level_source.hpp"

namespace vtpage::vt {
namespace {

class FeedbackProcessorTest : public testing::Test {
protected:
    FeedbackProcessorTest() : set_(100'000) {
        set_.add(std::make_shared<test::PatternSource>(9, 1));   // texture 0
        set_.add(std::make_shared<test::PatternSource>(13, 2));  // texture 1
    }
    std::vector<FeedbackEntry> entries(const TileId& tile, int count) {
        return std::vector<FeedbackEntry>(std::size_t(count), FeedbackEntry::make(tile));
    }
    TextureSet set_;
};

// In a tile level each tile is a page, and a sampled tile brings the 8 around it (clipped at
// the level's edge), each counted once, after the sampled ones of its level; in the other levels
// a page is asked for as before.
TEST(FeedbackProcessorTiles, ASampledTileOfATileLevelBringsTheTilesAroundIt) {
    TextureSet set(100'000);
    const TextureId id =
        set.add(std::make_shared<TileLevelSource>(std::make_shared<test::PatternSource>(13, 2), 1));
    const TextureLayout layout = set.layout(id);
    const PageIndex base = set.base_page(id);
    std::vector<FeedbackEntry> feedback(5, FeedbackEntry::make({id, 0, 10, 10}));
    feedback.push_back(FeedbackEntry::make({id, 0, 0, 0}));  // a corner: 3 around it
    feedback.push_back(FeedbackEntry::make({id, 1, 5, 5}));  // mip 1: pages of 32 tiles
    std::map<bool, std::size_t> coarser;
    for (const bool neighbours : {true, false}) {
        FeedbackProcessor processor(set, {.tile_neighbours = neighbours});
        const FeedbackResult result = processor.process(feedback);
        std::map<PageIndex, std::uint32_t> count;
        std::size_t mip0 = 0;
        for (const PageRequest& request : result.requests) {
            count[request.page] = request.count;
            mip0 += request.mip == 0;
        }
        EXPECT_EQ(count[base + layout.locate(0, 10, 10).page], 5u);
        EXPECT_EQ(count[base + layout.locate(0, 0, 0).page], 1u);
        // The coarser levels' pages are the same either way: tiles around bring no parents.
        coarser[neighbours] = result.requests.size() - mip0;
        if (!neighbours) {
            EXPECT_EQ(mip0, 2u);
            continue;
        }
        EXPECT_EQ(mip0, 2u + 8u + 3u) << "the sampled tiles and those around them";
        for (std::uint32_t y = 9; y <= 11; ++y) {
            for (std::uint32_t x = 9; x <= 11; ++x) {
                EXPECT_TRUE(count.count(base + layout.locate(0, x, y).page)) << x << "," << y;
            }
        }
        EXPECT_EQ(count[base + layout.locate(0, 9, 9).page], 1u);
        // Sampled tiles of the level come before the tiles around them.
        const auto at = [&](PageIndex page) {
            return std::find_if(result.requests.begin(), result.requests.end(),
                                [&](const PageRequest& r) { return r.page == page; }) -
                   result.requests.begin();
        };
        EXPECT_LT(at(base + layout.locate(0, 10, 10).page), at(base + layout.locate(0, 9, 9).page));
    }
    EXPECT_EQ(coarser[true], coarser[false]);
    EXPECT_GT(coarser[true], 0u);
}

TEST_F(FeedbackProcessorTest, UniquePagesWithParentsCountedAndOrderedCoarseFirst) {
    std::vector<FeedbackEntry> feedback;
    auto add = [&](const TileId& tile, int count) {
        auto more = entries(tile, count);
        feedback.insert(feedback.end(), more.begin(), more.end());
    };
    add({1, 0, 0, 0}, 5);                 // mip 0 page (0, 0) of texture 1
    add({1, 0, 1, 1}, 2);                 // the same page
    add({1, 0, 60, 30}, 9);               // mip 0 page (7, 7)
    add({1, 2, 0, 0}, 1);                 // a mip 2 page that is also a parent
    feedback.push_back(FeedbackEntry{});  // empty
    add({1, 0, 0, 0}, 1);                 // the first page again, apart from its run

    FeedbackProcessor processor(set_);
    const FeedbackResult result = processor.process(feedback);
    EXPECT_EQ(result.samples, 18u);
    EXPECT_EQ(result.invalid, 0u);
    EXPECT_EQ(result.dropped, 0u);

    const TextureLayout layout = set_.layout(1);
    const PageIndex base = set_.base_page(1);
    std::map<PageIndex, PageRequest> by_page;
    for (const auto& request : result.requests) {
        EXPECT_TRUE(by_page.emplace(request.page, request).second)
            << "page twice: " << request.page;
    }
    const PageIndex first = base + layout.locate(0, 0, 0).page;
    const PageIndex second = base + layout.locate(0, 60, 30).page;
    ASSERT_TRUE(by_page.count(first));
    ASSERT_TRUE(by_page.count(second));
    EXPECT_EQ(by_page[first].count, 8u);
    EXPECT_EQ(by_page[second].count, 9u);
    // Every page's parents are there, up to the tail, each counted with its children.
    for (PageIndex page : {first, second}) {
        PageIndex child = page;
        while (auto parent = set_.parent(child)) {
            if (*parent == set_.tail_page(1)) break;
            ASSERT_TRUE(by_page.count(*parent)) << "missing parent " << *parent;
            EXPECT_GE(by_page[*parent].count, by_page[child].count);
            EXPECT_EQ(by_page[*parent].mip, by_page[child].mip + 1);
            child = *parent;
        }
    }
    // Page (0, 0) of mip 2 has the first chain and its own sample; the chains of all three
    // meet at page (0, 0) of mip 3.
    EXPECT_EQ(by_page[base + layout.locate(2, 0, 0).page].count, 8u + 1u);
    EXPECT_EQ(by_page[base + layout.locate(3, 0, 0).page].count, 8u + 9u + 1u);
    EXPECT_FALSE(by_page.count(set_.tail_page(1)));
    // Coarse first, then by count.
    EXPECT_TRUE(std::is_sorted(result.requests.begin(), result.requests.end(), higher_priority));
    for (std::size_t i = 1; i < result.requests.size(); ++i) {
        EXPECT_GE(result.requests[i - 1].mip, result.requests[i].mip);
    }
}

TEST_F(FeedbackProcessorTest, BoundedDropsTheFinestFirst) {
    std::vector<FeedbackEntry> feedback;
    const TextureLayout layout = set_.layout(1);
    for (std::uint32_t y = 0; y < layout.mips[0].tiles_y; y += 4) {
        for (std::uint32_t x = 0; x < layout.mips[0].tiles_x; x += 8) {
            feedback.push_back(FeedbackEntry::make({1, 0, x, y}));
        }
    }
    FeedbackProcessor unbounded(set_, {.max_requests = 1'000'000});
    const auto all = unbounded.process(feedback);
    FeedbackProcessor bounded(set_, {.max_requests = 10});
    const auto some = bounded.process(feedback);
    ASSERT_EQ(some.requests.size(), 10u);
    EXPECT_EQ(some.dropped, all.requests.size() - 10);
    EXPECT_TRUE(std::equal(some.requests.begin(), some.requests.end(), all.requests.begin()));
    EXPECT_GT(some.requests.back().mip, 0u);  // mip 0 pages were the ones dropped
}

TEST_F(FeedbackProcessorTest, InvalidTailAndParentlessEntries) {
    std::vector<FeedbackEntry> feedback;
    feedback.push_back(FeedbackEntry::make({7, 0, 0, 0}));   // no such texture
    feedback.push_back(FeedbackEntry::make({0, 10, 0, 0}));  // no such mip (2^9 has 10)
    feedback.push_back(FeedbackEntry::make({0, 0, 5, 0}));   // tile outside mip 0 (5 tiles)
    feedback.push_back(FeedbackEntry::make({0, 5, 0, 0}));   // tail mip of texture 0
    feedback.push_back(FeedbackEntry::make({0, 0, 4, 4}));   // valid
    FeedbackProcessor processor(set_, {.include_parents = false});
    const auto result = processor.process(feedback);
    EXPECT_EQ(result.invalid, 3u);
    EXPECT_EQ(result.tail_samples, 1u);
    ASSERT_EQ(result.requests.size(), 1u);
    EXPECT_EQ(result.requests[0].page, set_.global_page(TileId{0, 0, 4, 4}));
    EXPECT_EQ(result.requests[0].texture, 0u);
    EXPECT_EQ(result.requests[0].count, 1u);
    EXPECT_TRUE(processor.process({}).requests.empty());
}

// A scratch and a result carried from call to call give what a fresh call gives: nothing of an
// earlier feedback leaks into a later one.
TEST_F(FeedbackProcessorTest, ReusedScratchGivesTheSameResultsAsFreshCalls) {
    const FeedbackProcessor processor(set_);
    FeedbackScratch scratch;
    FeedbackResult reused;
    std::vector<std::vector<FeedbackEntry>> feedbacks;
    for (std::uint32_t f = 0; f < 6; ++f) {
        std::vector<FeedbackEntry> feedback;
        for (std::uint32_t i = 0; i < 200 * (f % 3 + 1); ++i) {
            feedback.push_back(
                FeedbackEntry::make({1, f % 2, (i * 7 + f) % 40, (i / 13 + f) % 30}));
        }
        feedback.push_back(FeedbackEntry::make({7, 0, 0, 0}));  // invalid
        feedback.push_back(FeedbackEntry{});                    // empty
        feedbacks.push_back(feedback);
    }
    feedbacks.push_back({});  // nothing at all after something
    for (const auto& feedback : feedbacks) {
        const FeedbackResult fresh = processor.process(feedback);
        processor.process(feedback, scratch, reused);
        EXPECT_EQ(reused.requests, fresh.requests);
        EXPECT_EQ(reused.samples, fresh.samples);
        EXPECT_EQ(reused.invalid, fresh.invalid);
        EXPECT_EQ(reused.tail_samples, fresh.tail_samples);
        EXPECT_EQ(reused.dropped, fresh.dropped);
    }
    EXPECT_TRUE(reused.requests.empty());
}

// Runs of every length around the 8 entries skipped at once, with empty entries and other
// tiles between them: each tile is counted with every one of its samples.
TEST_F(FeedbackProcessorTest, RunsOfAnyLengthCountEverySample) {
    const FeedbackProcessor processor(set_, {.include_parents = false});
    const TextureLayout layout = set_.layout(1);
    const PageIndex base = set_.base_page(1);
    std::vector<FeedbackEntry> feedback;
    std::map<PageIndex, std::uint64_t> expected;
    std::size_t samples = 0;
    for (std::uint32_t length : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 64u, 3u, 1u, 250u}) {
        // Tiles (0..59, y) lie in pages of 8 tiles each way: a new page every few runs.
        const TileId tile{1, 0, (length * 3) % 60, length % 30};
        auto run = entries(tile, int(length));
        feedback.insert(feedback.end(), run.begin(), run.end());
        expected[base + layout.locate(0, tile.x, tile.y).page] += length;
        samples += length;
        for (std::uint32_t e = 0; e < length % 4; ++e) feedback.push_back(FeedbackEntry{});
    }
    const FeedbackResult result = processor.process(feedback);
    EXPECT_EQ(result.samples, samples);
    std::map<PageIndex, std::uint64_t> counted;
    for (const auto& request : result.requests) counted[request.page] += request.count;
    EXPECT_EQ(counted, expected);
}

// A texture added after the processor's first feedback is known to the next one: before, its
// entries are invalid; after, they ask for its pages.
TEST_F(FeedbackProcessorTest, ATextureAddedLaterIsKnownToTheNextFeedback) {
    const FeedbackProcessor processor(set_);
    FeedbackScratch scratch;
    FeedbackResult result;
    const std::vector<FeedbackEntry> feedback = entries({2, 0, 3, 4}, 10);
    processor.process(feedback, scratch, result);
    EXPECT_EQ(result.invalid, 10u);
    EXPECT_TRUE(result.requests.empty());
    const TextureId added = set_.add(std::make_shared<test::PatternSource>(11, 3));
    ASSERT_EQ(added, 2u);
    processor.process(feedback, scratch, result);
    EXPECT_EQ(result.invalid, 0u);
    ASSERT_FALSE(result.requests.empty());
    const PageIndex page = set_.base_page(2) + set_.layout(2).locate(0, 3, 4).page;
    EXPECT_TRUE(std::any_of(result.requests.begin(), result.requests.end(),
                            [&](const PageRequest& r) { return r.page == page && r.count == 10; }));
}

}  // namespace
}  // namespace vtpage::vt
