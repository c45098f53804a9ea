// The bookkeeping of packed coarse levels: which levels are packed, where their tiles go in a
// shared page, and the frame fences of their eviction and of the reuse of their places.
#include "streaming/streamer/packed_level_pool.hpp"

#include <gtest/gtest.h>

#include <set>

namespace vtpage::vt {
namespace {

// The tiles a level of `shape` covers when placed at `first`.
std::set<std::uint32_t> tiles_of(LevelShape shape, std::uint32_t first) {
    const TileFormatInfo info = tile_format_info(shape.format);
    std::set<std::uint32_t> tiles;
    for (std::uint32_t y = 0; y < shape.tiles_y; ++y) {
        for (std::uint32_t x = 0; x < shape.tiles_x; ++x) {
            tiles.insert(first + y * info.page_tiles_x + x);
        }
    }
    return tiles;
}

TEST(PackedLevelPoolTest, OnlySinglePageLevelsWithRoomForAnotherArePacked) {
    const TextureLayout rgba(15);  // 2^15 RGBA8: mip 6 is 5 x 5 tiles (two pages), tail at 9
    EXPECT_FALSE(PackedLevelPool::packable(rgba, 0));
    EXPECT_FALSE(PackedLevelPool::packable(rgba, 6));
    EXPECT_EQ(PackedLevelPool::packable(rgba, 7), (LevelShape{TileFormat::rgba8, 3, 3}));
    EXPECT_EQ(PackedLevelPool::packable(rgba, 8), (LevelShape{TileFormat::rgba8, 2, 2}));
    EXPECT_FALSE(PackedLevelPool::packable(rgba, rgba.tail_first_mip));
    EXPECT_FALSE(PackedLevelPool::packable(rgba, 40));
    const TextureLayout bc1(1u << 14, 1u << 14, TileFormat::bc1);  // 8 x 8 tiles a page
    EXPECT_EQ(PackedLevelPool::packable(bc1, 5), (LevelShape{TileFormat::bc1, 3, 3}));
    EXPECT_EQ(PackedLevelPool::packable(bc1, 6), (LevelShape{TileFormat::bc1, 2, 2}));
    // A level of 5 x 4 RGBA8 tiles leaves no room for a second one: a page of its own.
    const TextureLayout wide(600, 480);
    EXPECT_EQ(wide.mips[0].tiles_x, 5u);
    EXPECT_EQ(wide.mips[0].tiles_y, 4u);
    EXPECT_FALSE(PackedLevelPool::packable(wide, 0));
}

TEST(PackedLevelPoolTest, PlacesNeverOverlapAndStayInThePage) {
    for (TileFormat format : {TileFormat::rgba8, TileFormat::bc1, TileFormat::bc3}) {
        const TileFormatInfo info = tile_format_info(format);
        for (std::uint32_t w = 1; w <= info.page_tiles_x; ++w) {
            for (std::uint32_t h = 1; h <= info.page_tiles_y; ++h) {
                const LevelShape shape{format, w, h};
                std::set<std::uint32_t> used;
                for (std::uint32_t first : PackedLevelPool::places_of(shape)) {
                    for (std::uint32_t tile : tiles_of(shape, first)) {
                        EXPECT_LT(tile, info.tiles_per_page()) << w << "x" << h;
                        EXPECT_TRUE(used.insert(tile).second) << w << "x" << h << " tile " << tile;
                    }
                }
                EXPECT_GE(PackedLevelPool::places_of(shape).size(), 1u) << w << "x" << h;
            }
        }
    }
    // RGBA8 pages are 8 x 4 tiles: two 3 x 3 levels, eight 2 x 2 levels.
    EXPECT_EQ(PackedLevelPool::places_of({TileFormat::rgba8, 3, 3}),
              (std::vector<std::uint32_t>{0, 3}));
    EXPECT_EQ(PackedLevelPool::places_of({TileFormat::rgba8, 2, 2}).size(), 8u);
    EXPECT_EQ(PackedLevelPool::places_of({TileFormat::bc1, 3, 3}).size(), 5u);
}

TEST(PackedLevelPoolTest, TakesFreePlacesThenEvictsTheLeastRecentlyUsedOfItsShape) {
    const LevelShape shape{TileFormat::rgba8, 3, 3};
    PackedLevelPool pool;
    EXPECT_FALSE(pool.take(100, shape, 0)) << "no host yet";
    EXPECT_EQ(pool.add_host(shape), 0u);
    const auto a = pool.take(100, shape, 0);
    const auto b = pool.take(101, shape, 0);
    ASSERT_TRUE(a && b);
    EXPECT_FALSE(pool.take(102, shape, 0)) << "the host holds two";
    EXPECT_EQ(a->offset, 0u);
    EXPECT_EQ(b->offset, 3 * std::uint64_t(tile_bytes));
    EXPECT_EQ(a->bytes, (2 * 8 + 3) * std::uint64_t(tile_bytes));
    // Reserved levels are not evictable until filled.
    EXPECT_FALSE(pool.evict(shape, 10, 102, 10).victim);
    pool.filled(100, 1, 1);
    pool.filled(101, 2, 2);
    EXPECT_EQ(pool.resident_levels(), 2u);
    pool.touch(100, 3);  // 101 is now the least recently used
    EXPECT_FALSE(pool.evict(shape, 1, 102, 10).victim) << "frame 2 is not complete";
    EXPECT_EQ(pool.evict(shape, 2, 102, 10).victim, 101u);
    EXPECT_FALSE(pool.holds(101));
    EXPECT_EQ(pool.resident_levels(), 1u);
}

// Recency is the frame that asked, not the frame that filled: a level asked for in frame N
// takes the place of a level wanted before N only. When every level was wanted in N or later
// the request is superseded (the view keeps what it samples); a fenced older level makes it
// wait instead. Frame 0 (no frame begun) is plain LRU.
TEST(PackedLevelPoolTest, ALevelTakesNoPlaceFromALevelWantedSinceItWasAskedFor) {
    const LevelShape shape{TileFormat::rgba8, 3, 3};
    PackedLevelPool pool;
    pool.add_host(shape);
    ASSERT_TRUE(pool.take(100, shape, 0) && pool.take(101, shape, 0));
    pool.filled(100, 9, 3);  // asked for in frame 3, filled while frame 9 was current
    pool.filled(101, 4, 4);
    EXPECT_TRUE(pool.evict(shape, 9, 102, 3).superseded) << "both were wanted in frame 3 or later";
    const auto waits = pool.evict(shape, 3, 102, 5);
    EXPECT_FALSE(waits.victim) << "frames 4 and 9 may still sample them";
    EXPECT_FALSE(waits.superseded) << "both are older than the request: wait for their frames";
    EXPECT_EQ(pool.evict(shape, 8, 103, 5).victim, 101u)
        << "100 is the least recently wanted, but frame 9 may sample it";
    pool.touch(100, 12);
    EXPECT_TRUE(pool.evict(shape, 12, 104, 12).superseded);
    EXPECT_EQ(pool.evict(shape, 12, 104, 0).victim, 100u) << "frame 0: plain LRU";
}

TEST(PackedLevelPoolTest, AnEvictedPlaceWaitsForTheFramesBegunBeforeItsEvictionWasReported) {
    const LevelShape shape{TileFormat::rgba8, 2, 2};
    PackedLevelPool pool;
    pool.add_host(shape);
    for (PageIndex level = 0; level < 8; ++level) {
        ASSERT_TRUE(pool.take(level, shape, 0));
        pool.filled(level, 1, 1);
    }
    ASSERT_TRUE(pool.evict(shape, 4, 50, 10).victim);
    EXPECT_FALSE(pool.take(50, shape, 100)) << "the eviction is not reported yet";
    pool.evictions_reported(6);  // frame 6 had begun when the event was delivered
    EXPECT_FALSE(pool.take(50, shape, 5));
    const auto place = pool.take(50, shape, 6);
    ASSERT_TRUE(place);
    // A failed fill gives its place back at once (it was never visible).
    pool.release(50);
    EXPECT_TRUE(pool.take(51, shape, 0));
    // A resident level leaves only by eviction.
    pool.release(3);
    EXPECT_TRUE(pool.holds(3));
}

// A level that had a place evicted for it waits for that place: trying again while the place
// waits for its frames evicts nothing more. Another level may still evict for itself.
TEST(PackedLevelPoolTest, ALevelWaitingForAnEvictedPlaceEvictsNoMore) {
    const LevelShape shape{TileFormat::rgba8, 2, 2};
    PackedLevelPool pool;
    pool.add_host(shape);
    for (PageIndex level = 0; level < 8; ++level) {
        ASSERT_TRUE(pool.take(level, shape, 0));
        pool.filled(level, 1, 1);
    }
    ASSERT_EQ(pool.evict(shape, 4, 50, 10).victim, 0u);
    EXPECT_FALSE(pool.evict(shape, 4, 50, 10).victim) << "unreported yet";
    pool.evictions_reported(6);
    for (int attempt = 0; attempt < 3; ++attempt) {
        EXPECT_FALSE(pool.take(50, shape, 5));
        EXPECT_FALSE(pool.evict(shape, 5, 50, 10).victim) << "its place waits for frame 6";
    }
    EXPECT_EQ(pool.resident_levels(), 7u);
    EXPECT_EQ(pool.evict(shape, 5, 51, 10).victim, 1u) << "another level is not held back";
    pool.evictions_reported(7);
    EXPECT_TRUE(pool.take(50, shape, 6)) << "ripe now";
    EXPECT_FALSE(pool.take(52, shape, 6)) << "51's place waits for frame 7";
}

TEST(PackedLevelPoolTest, ARetiredHostTakesNoLevelAndIsReleasedOnceItsPlacesAreRipe) {
    const LevelShape shape{TileFormat::rgba8, 3, 3};
    PackedLevelPool pool;
    pool.add_host(shape);
    pool.add_host(shape);
    for (PageIndex level = 0; level < 3; ++level) {
        ASSERT_TRUE(pool.take(level, shape, 0));
        pool.filled(level, 2, 2);
    }
    // Host 1 holds one level, host 0 two: host 1 is retired.
    ASSERT_TRUE(pool.retire_host());
    EXPECT_EQ(pool.active_hosts(), 1u);
    EXPECT_EQ(pool.host_count(), 2u);
    EXPECT_FALSE(pool.take(10, shape, 100)) << "a retired host's free place is not taken";
    EXPECT_TRUE(pool.evict_retired(1).empty()) << "frame 2 is not complete";
    EXPECT_FALSE(pool.release_retired(100)) << "a level is still in it";
    const auto victims = pool.evict_retired(2);
    ASSERT_EQ(victims.size(), 1u);
    EXPECT_EQ(pool.place_of(victims[0]), std::nullopt);
    EXPECT_FALSE(pool.release_retired(100)) << "its eviction is not reported yet";
    pool.evictions_reported(5);
    EXPECT_FALSE(pool.release_retired(4));
    EXPECT_EQ(pool.release_retired(5), 1u);
    EXPECT_EQ(pool.host_count(), 1u);
    EXPECT_EQ(pool.hosts_held(), (std::vector<std::size_t>{0}));
    // Its index is the next host's.
    EXPECT_EQ(pool.next_host(), 1u);
    EXPECT_EQ(pool.add_host(shape), 1u);
    EXPECT_TRUE(pool.take(10, shape, 0));
    EXPECT_FALSE(pool.retire_host() && pool.retire_host() && pool.retire_host());
}

}  // namespace
}  // namespace vtpage::vt
