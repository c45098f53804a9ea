#include "vtpage/streaming/feedback/residency_efficiency.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/feedback/feedback_worker.hpp"
#include "vtpage/streaming/sources/tile_level_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;
using TileCounts = std::vector<std::pair<std::uint64_t, std::uint32_t>>;

std::uint64_t key(TextureId texture, std::uint32_t mip, std::uint32_t x, std::uint32_t y) {
    const FeedbackEntry entry = FeedbackEntry::make({texture, mip, x, y});
    return std::uint64_t(entry.texture_mip) << 32 | entry.tile_xy;
}

class ResidencyEfficiencyTest : public test::BackendTest {
protected:
    void TearDown() override { expect_baseline_resources("the streamer leaked"); }
};

// A 4096 x 4096 RGBA8 texture: tiles of 120 texels (64 KiB), pages of 8 x 4 tiles, so mip 0 is
// 35 x 35 tiles and its pages at the right edge hold 3 x 4; mip 4 (256 texels) is 3 x 3 tiles,
// packed into a shared page; the tail starts at mip 6. Resident: the pages of tiles (0..7, 0..3)
// and (8..15, 0..3), the edge page of tiles (32..34, 0..3) and the packed mip 4:
// 32 + 32 + 12 + 9 = 85 tiles. The figures below are worked out by hand from that.
TEST_P(ResidencyEfficiencyTest, CountsTheResidentTilesTheLastFramesAskedFor) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    const TextureLayout layout = streamer.textures().layout(id);
    const TileFormatInfo format = layout.tile_format();
    ASSERT_EQ(format.tile_payload(), 120u);
    ASSERT_EQ(format.tile_bytes(), 64u << 10);
    ASSERT_EQ(format.page_tiles_x, 8u);
    ASSERT_EQ(format.page_tiles_y, 4u);
    ASSERT_EQ(layout.mips[0].tiles_x, 35u);
    ASSERT_EQ(layout.mips[4].tiles_x, 3u);
    ASSERT_EQ(layout.tail_first_mip, 6u);
    const PageIndex base = streamer.textures().base_page(id);
    const std::vector<PageIndex> pages = {
        base + layout.locate(0, 0, 0).page, base + layout.locate(0, 32, 0).page,
        base + layout.locate(4, 0, 0).page, base + layout.locate(0, 8, 0).page};
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (PageIndex page : pages) ASSERT_TRUE(streamer.is_ready(page)) << page;
    ASSERT_TRUE(streamer.ready_page(pages[2])->packed());
    EXPECT_EQ(streamer.ready_pages().size(), 5u);  // and the tail

    ResidencyEfficiency residency(8);
    // Frame 1 asks for two tiles of the first page; frames 2 to 8 for nothing.
    residency.add_frame(1, TileCounts{{key(id, 0, 5, 2), 1}, {key(id, 0, 6, 3), 4}});
    for (FrameId frame = 2; frame <= 8; ++frame) residency.add_frame(frame, TileCounts{});
    const ResidencySample first = residency.measure(streamer);
    EXPECT_EQ(first.frame, 8u);
    EXPECT_EQ(first.resident_tiles, 85u);
    EXPECT_EQ(first.sampled_tiles, 2u);
    EXPECT_EQ(first.asked_tiles, 2u);
    EXPECT_EQ(first.in_use_tiles, 32u);  // the first page alone
    EXPECT_EQ(first.in_use_bytes, page_bytes);

    // Frame 9: three tiles of the first page, one of the edge page, one of a page that is not
    // resident, one of the packed level, one of the tail (left out) and one past the level's
    // edge (no such tile: left out); none of the second page. Frame 1 has left the window.
    residency.add_frame(9, TileCounts{{key(id, 0, 0, 0), 9},
                                      {key(id, 0, 1, 0), 1},
                                      {key(id, 0, 2, 1), 1},
                                      {key(id, 0, 33, 2), 2},
                                      {key(id, 0, 10, 8), 1},
                                      {key(id, 4, 1, 1), 3},
                                      {key(id, 6, 0, 0), 7},
                                      {key(id, 0, 35, 0), 1}});
    const ResidencySample sample = residency.measure(streamer);
    EXPECT_EQ(sample.frame, 9u);
    EXPECT_EQ(sample.resident_tiles, 85u);
    EXPECT_EQ(sample.sampled_tiles, 5u);  // 3 + 1 + 1
    EXPECT_EQ(sample.asked_tiles, 6u);    // and the one not resident
    EXPECT_EQ(sample.tile_granular_bytes, 6u * (64u << 10));
    EXPECT_EQ(sample.resident_bytes, 3 * page_bytes + 9u * (64u << 10));
    EXPECT_EQ(sample.in_use_tiles, 53u);  // all but the second page
    EXPECT_EQ(sample.in_use_bytes, 2 * page_bytes + 9u * (64u << 10));
    EXPECT_DOUBLE_EQ(sample.sampled_share(), 5.0 / 85.0);
    EXPECT_DOUBLE_EQ(sample.in_use_share(), 5.0 / 53.0);
    EXPECT_DOUBLE_EQ(ResidencySample{}.sampled_share(), 1.0);
    EXPECT_DOUBLE_EQ(ResidencySample{}.in_use_share(), 1.0);
}

// measure_when_due measures once a window of frames was added, and keeps that sample between.
// Streamed by tile in mip 0, a resident page of that level is its one tile: three tiles
// resident, one of them asked for, is a third of them sampled and all of what is in use.
TEST_P(ResidencyEfficiencyTest, ATileOfATileLevelIsOneResidentTile) {
    StreamerSettings settings = test::streamer_test_settings(64);
    settings.table.region_size = std::size_t(1251 + 2) * page_bytes;  // 35 x 35 tiles, a page each
    Streamer streamer(*backend_, settings);
    const TextureId id = streamer.add_texture(
        std::make_shared<TileLevelSource>(std::make_shared<test::PatternSource>(12, 4), 1));
    const TextureLayout layout = streamer.textures().layout(id);
    ASSERT_EQ(layout.tile_levels, 1u);
    const PageIndex base = streamer.textures().base_page(id);
    const std::vector<PageIndex> pages = {base + layout.locate(0, 0, 0).page,
                                          base + layout.locate(0, 1, 0).page,
                                          base + layout.locate(0, 5, 2).page};
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (PageIndex page : pages) ASSERT_TRUE(streamer.is_ready(page)) << page;

    ResidencyEfficiency residency(8);
    // One resident tile and one that is not (its neighbour in the same source page).
    residency.add_frame(1, TileCounts{{key(id, 0, 0, 0), 3}, {key(id, 0, 2, 0), 1}});
    const ResidencySample sample = residency.measure(streamer);
    EXPECT_EQ(sample.resident_tiles, 3u);
    EXPECT_EQ(sample.resident_bytes, 3u * (64u << 10));
    EXPECT_EQ(sample.sampled_tiles, 1u);
    EXPECT_EQ(sample.in_use_tiles, 1u);
    EXPECT_EQ(sample.in_use_bytes, 64u << 10);
    EXPECT_EQ(sample.asked_tiles, 2u);
    EXPECT_EQ(sample.tile_granular_bytes, 2u * (64u << 10));
}

TEST_P(ResidencyEfficiencyTest, IsMeasuredOnceAWindow) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    ResidencyEfficiency residency(4);
    for (FrameId frame = 1; frame <= 3; ++frame) {
        residency.add_frame(frame, TileCounts{{key(id, 0, 0, 0), 1}});
        EXPECT_EQ(residency.measure_when_due(streamer).frame, 0u) << frame;
    }
    residency.add_frame(4, TileCounts{});
    EXPECT_EQ(residency.measure_when_due(streamer).frame, 4u);
    EXPECT_EQ(residency.measure_when_due(streamer).asked_tiles, 1u);
    residency.add_frame(5, TileCounts{});
    EXPECT_EQ(residency.measure_when_due(streamer).frame, 4u);
}

// The window is the feedbacks added, not frame numbers: feedback coalesced away (frames with
// no feedback of their own) does not shrink it.
TEST_P(ResidencyEfficiencyTest, TheWindowCountsFeedbacksNotFrameNumbers) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    ResidencyEfficiency residency(2);
    residency.add_frame(1, TileCounts{{key(id, 0, 0, 0), 1}});
    residency.add_frame(10, TileCounts{{key(id, 0, 1, 0), 1}});
    residency.add_frame(20, TileCounts{{key(id, 0, 2, 0), 1}});
    const ResidencySample sample = residency.measure(streamer);
    EXPECT_EQ(sample.frame, 20u);
    EXPECT_EQ(sample.asked_tiles, 2u);  // frames 10 and 20
}

// The feedback worker measures it every residency_window_frames feedbacks and says so in its
// results: a view of 4 x 2 tiles of mip 0, streamed in, is sampled tile for tile.
TEST_P(ResidencyEfficiencyTest, TheFeedbackWorkerReportsIt) {
    Streamer streamer(*backend_, test::streamer_test_settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    std::vector<FeedbackEntry> view;
    for (std::uint32_t y = 0; y < 2; ++y) {
        for (std::uint32_t x = 0; x < 4; ++x) view.push_back(FeedbackEntry::make({id, 0, x, y}));
    }
    FeedbackWorker worker(streamer, {.residency_window_frames = 4});
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 4; ++i) {
            worker.post(streamer.begin_frame(), view);
            ASSERT_TRUE(worker.drain(10s));
        }
        ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    }
    ASSERT_EQ(worker.take_error(), nullptr);
    const ResidencySample sample = worker.last_result().residency;
    EXPECT_GT(sample.frame, 0u);
    EXPECT_EQ(sample.asked_tiles, 8u);
    EXPECT_EQ(sample.sampled_tiles, 8u);  // the 8 tiles lie in mip 0's first page
    EXPECT_EQ(sample.in_use_tiles, 32u);  // that page (its parents were not asked for)
    EXPECT_GT(sample.resident_tiles, 32u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ResidencyEfficiencyTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage::vt
