#include <gtest/gtest.h>

#include "../support/expect_error.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/sources/texture_set.hpp"

namespace vtpage::vt {
namespace {

TEST(TextureSetTest, TexturesGetConsecutivePageRuns) {
    TextureSet set(10'000, 100);
    const TextureId a = set.add(std::make_shared<test::PatternSource>(10, 1));
    const TextureId b = set.add(std::make_shared<test::PatternSource>(12, 2));
    const TextureId c = set.add(std::make_shared<test::PatternSource>(3, 3));
    EXPECT_EQ(a, 0u);
    EXPECT_EQ(b, 1u);
    EXPECT_EQ(c, 2u);
    EXPECT_EQ(set.base_page(a), 100u);
    EXPECT_EQ(set.base_page(b), 100u + TextureLayout(10).page_count);
    EXPECT_EQ(set.base_page(c), set.base_page(b) + TextureLayout(12).page_count);
    EXPECT_EQ(set.pages_used(), TextureLayout(10).page_count + TextureLayout(12).page_count + 1);
    EXPECT_EQ(set.tail_page(c), set.base_page(c));
}

TEST(TextureSetTest, ReverseLookupFindsEveryPage) {
    TextureSet set(10'000);
    set.add(std::make_shared<test::PatternSource>(11, 1));
    set.add(std::make_shared<test::PatternSource>(9, 2));
    for (TextureId id = 0; id < 2; ++id) {
        const TextureLayout layout = set.layout(id);
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            const PageIndex global = set.global_page(id, page);
            const auto owner = set.find(global);
            ASSERT_TRUE(owner);
            EXPECT_EQ(owner->texture, id);
            EXPECT_EQ(owner->layout_page, page);
            EXPECT_EQ(owner->position, page_position(layout, page));
            EXPECT_EQ(owner->tail, page == layout.tail_page());
        }
    }
    EXPECT_FALSE(set.find(set.pages_used()));
    EXPECT_EQ(test::error_code_of([&] { set.global_page(0, TextureLayout(11).page_count); }),
              Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] { set.info(2); }), Errc::out_of_range);
}

TEST(TextureSetTest, TilesAndParentsMapToGlobalPages) {
    TextureSet set(10'000);
    set.add(std::make_shared<test::PatternSource>(8, 1));
    const TextureId id = set.add(std::make_shared<test::PatternSource>(12, 2));
    const TextureLayout layout = set.layout(id);
    const PageIndex page = set.global_page(TileId{id, 0, 20, 9});
    EXPECT_EQ(page, set.base_page(id) + layout.locate(0, 20, 9).page);
    const auto parent = set.parent(page);
    ASSERT_TRUE(parent);
    EXPECT_EQ(*parent, set.global_page(TileId{id, 1, 10, 4}));
    EXPECT_FALSE(set.parent(set.tail_page(id)));
    EXPECT_EQ(test::error_code_of([&] {
                  set.global_page(TileId{id, 0, layout.mips[0].tiles_x, 0});
              }),
              Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] {
                  set.global_page(TileId{id, layout.mip_count, 0, 0});
              }),
              Errc::out_of_range);
}

TEST(TextureSetTest, RefusesWhatDoesNotFit) {
    TextureSet set(TextureLayout(10).page_count + 1);
    set.add(std::make_shared<test::PatternSource>(10, 1));
    EXPECT_EQ(test::error_code_of([&] { set.add(std::make_shared<test::PatternSource>(10, 2)); }),
              Errc::out_of_memory);
    set.add(std::make_shared<test::PatternSource>(2, 3));  // the one page left
    EXPECT_EQ(test::error_code_of([&] { set.add(nullptr); }), Errc::invalid_argument);
    EXPECT_EQ(test::error_code_of([&] { set.add(std::make_shared<test::PatternSource>(21, 4)); }),
              Errc::invalid_argument);
    EXPECT_EQ(set.texture_count(), 2u);
}

}  // namespace
}  // namespace vtpage::vt
