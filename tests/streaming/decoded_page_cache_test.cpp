#include "streaming/streamer/decoded_page_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "streaming_test_support.hpp"

namespace vtpage::vt::streamer_detail {
namespace {

DecodedPageCache::Page page_of(std::byte value) {
    return std::make_shared<const std::vector<std::byte>>(16, value);
}

// The least recently used page leaves first; a page found becomes the most recent.
TEST(DecodedPageCacheTest, KeepsTheMostRecentPagesUpToItsCapacity) {
    DecodedPageCache cache(2);
    const auto source = std::make_shared<test::PatternSource>(10, 1);
    cache.keep(source, 1, page_of(std::byte{1}));
    cache.keep(source, 2, page_of(std::byte{2}));
    ASSERT_TRUE(cache.find(source.get(), 1).bytes);  // 1 is now the most recent
    cache.keep(source, 3, page_of(std::byte{3}));
    EXPECT_FALSE(cache.find(source.get(), 2).bytes) << "the least recent left";
    ASSERT_TRUE(cache.find(source.get(), 1).bytes);
    EXPECT_EQ((*cache.find(source.get(), 3).bytes)[0], std::byte{3});
    EXPECT_FALSE(cache.find(source.get(), 4).bytes);
    EXPECT_EQ(cache.hits(), 3u);
    // Kept again: the newer bytes.
    cache.keep(source, 3, page_of(std::byte{9}));
    EXPECT_EQ((*cache.find(source.get(), 3).bytes)[0], std::byte{9});
}

// A source's pages keep the source alive: its address cannot name another source while they
// are kept. Pages of two sources never mix.
TEST(DecodedPageCacheTest, PagesOfASourceKeepItAliveAndNeverMix) {
    DecodedPageCache cache(4);
    auto first = std::make_shared<test::PatternSource>(10, 1);
    const auto second = std::make_shared<test::PatternSource>(10, 2);
    const std::weak_ptr<test::PatternSource> watched = first;
    const TileSource* first_address = first.get();
    cache.keep(first, 5, page_of(std::byte{1}));
    cache.keep(second, 5, page_of(std::byte{2}));
    first.reset();
    EXPECT_FALSE(watched.expired()) << "kept alive by its page";
    EXPECT_EQ((*cache.find(first_address, 5).bytes)[0], std::byte{1});
    EXPECT_EQ((*cache.find(second.get(), 5).bytes)[0], std::byte{2});
    // Pushed out, the page lets its source go.
    for (std::uint64_t page = 10; page < 14; ++page) cache.keep(second, page, page_of({}));
    EXPECT_TRUE(watched.expired());
}

TEST(DecodedPageCacheTest, ACacheOfNoPagesKeepsNothing) {
    DecodedPageCache cache(0);
    const auto source = std::make_shared<test::PatternSource>(10, 1);
    EXPECT_FALSE(cache.begin_keep(source.get(), 1));
    cache.keep(source, 1, page_of(std::byte{1}));
    EXPECT_FALSE(cache.find(source.get(), 1).bytes);
    EXPECT_FALSE(cache.find(source.get(), 1).on_its_way);
    EXPECT_EQ(cache.hits(), 0u);
}

// A page begun is on its way, for one keeper only, until it is kept or abandoned.
TEST(DecodedPageCacheTest, APageBegunIsOnItsWayUntilKeptOrAbandoned) {
    DecodedPageCache cache(4);
    const auto source = std::make_shared<test::PatternSource>(10, 1);
    ASSERT_TRUE(cache.begin_keep(source.get(), 1));
    EXPECT_FALSE(cache.begin_keep(source.get(), 1)) << "one thread keeps it";
    DecodedPageCache::Found found = cache.find(source.get(), 1);
    EXPECT_FALSE(found.bytes);
    EXPECT_TRUE(found.on_its_way);
    EXPECT_FALSE(cache.find(source.get(), 2).on_its_way) << "another page is not";
    cache.keep(source, 1, page_of(std::byte{7}));
    found = cache.find(source.get(), 1);
    ASSERT_TRUE(found.bytes);
    EXPECT_FALSE(found.on_its_way);
    EXPECT_FALSE(cache.begin_keep(source.get(), 1)) << "kept already";

    ASSERT_TRUE(cache.begin_keep(source.get(), 2));
    cache.abandon_keep(source.get(), 2);
    EXPECT_FALSE(cache.find(source.get(), 2).on_its_way);
    EXPECT_FALSE(cache.find(source.get(), 2).bytes);
    EXPECT_TRUE(cache.begin_keep(source.get(), 2)) << "to be begun again";
    EXPECT_EQ(cache.hits(), 1u) << "only a page found kept is a hit";
}

}  // namespace
}  // namespace vtpage::vt::streamer_detail
