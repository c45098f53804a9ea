#include <gtest/gtest.h>
#include <array>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "../support/test_point_handler.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"
#include "vtpage/streaming/sources/tile_level_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;

class StreamerTest : public test::BackendTest {
protected:
    void TearDown() override { expect_baseline_resources("the streamer leaked"); }
    StreamerSettings settings(std::size_t budget_pages) const {
        StreamerSettings s = test::streamer_test_settings(budget_pages);
        s.queue_events = true;
        return s;
    }
    // Every ready page holds its source's bytes (test::ready_holds_source).
    void expect_ready_pages_match(const Streamer& streamer) {
        std::size_t checked = 0;
        for (TextureId id = 0; id < streamer.textures().texture_count(); ++id) {
            ASSERT_TRUE(test::ready_pages_hold_their_source(*backend_, streamer, id, checked));
        }
        EXPECT_GT(checked, 0u);
    }
    static std::vector<PageIndex> all_pages(const TextureSet& set, TextureId id) {
        std::vector<PageIndex> pages(set.layout(id).page_count);
        std::iota(pages.begin(), pages.end(), set.base_page(id));
        return pages;
    }
};

TEST_P(StreamerTest, EveryResidentPageHoldsTheSourceBytes) {
    Streamer streamer(*backend_, settings(96));
    const TextureId procedural =
        streamer.add_texture(std::make_shared<ProceduralSource>(ProceduralSettings{3, 10}));
    const TextureId pattern = streamer.add_texture(std::make_shared<test::PatternSource>(12, 5));
    auto pages = all_pages(streamer.textures(), procedural);
    auto more = all_pages(streamer.textures(), pattern);
    pages.insert(pages.end(), more.begin(), more.end());
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(120s));
    streamer.rethrow_error();
    for (PageIndex page : pages) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_match(streamer);

    // Each page: committed, then ready, with the same slot and generation; tails first (the
    // second texture's packed into the first one's tail page).
    std::map<PageIndex, StreamedPage> committed;
    std::size_t ready = 0, packed_levels = 0;
    for (const StreamerEvent& event : streamer.poll_events()) {
        if (event.kind == StreamerEventKind::committed) {
            committed[event.page.page] = event.page;
        } else if (event.kind == StreamerEventKind::ready) {
            const PageIndex table_page = event.page.table_page;
            EXPECT_EQ(event.page.fence, 0u);
            ++ready;
            const TextureSet& set = streamer.textures();
            if (table_page >= set.first_page() + set.page_capacity()) {
                // A packed coarse level: in one of the streamer's own pages, which it commits
                // without events.
                ASSERT_TRUE(event.page.packed());
                const auto host = streamer.page_table().lookup(table_page);
                ASSERT_TRUE(host);
                EXPECT_EQ(host->generation, event.page.generation);
                ++packed_levels;
                continue;
            }
            ASSERT_TRUE(committed.count(table_page)) << "ready before committed";
            EXPECT_EQ(committed[table_page].physical, event.page.physical);
            EXPECT_EQ(committed[table_page].generation, event.page.generation);
        } else {
            ADD_FAILURE() << "nothing should be evicted under this budget";
        }
    }
    EXPECT_EQ(ready, pages.size());
    const auto stats = streamer.statistics();
    EXPECT_EQ(stats.pages_filled, pages.size());
    EXPECT_EQ(stats.failed_pages, 0u);
    // The two tails in one page, and the coarse levels of both (2^10: mip 1 is 5 x 5 tiles, two
    // pages; mip 2, 3 x 3, and mip 3, 2 x 2, are packed) in a page for each shape.
    EXPECT_EQ(stats.tail_pages, 1u);
    EXPECT_EQ(stats.packed_tails, 1u);
    EXPECT_EQ(packed_levels, 4u);
    EXPECT_EQ(stats.packed_levels, 4u);
    EXPECT_EQ(stats.level_pages, 2u);
    EXPECT_EQ(stats.table.pinned_pages, 3u);
    streamer.page_table().check_invariants();
}

// Thousands of textures would pin thousands of pages for their tails: packed, a page holds
// several (RGBA8 2^10: 7 tiles, 448 KiB, four a page). Each keeps its own bytes, requests for
// them commit nothing, and the budget that holds them packed does not hold them a page each.
TEST_P(StreamerTest, TailsOfManyTexturesShareTheirPages) {
    constexpr std::uint32_t textures = 20;
    Streamer streamer(*backend_, settings(6));
    std::vector<PageIndex> tails;
    for (std::uint32_t i = 0; i < textures; ++i) {
        const TileFormat format = i % 3 == 1 ? TileFormat::bc1 : TileFormat::rgba8;
        const TextureId id = streamer.add_texture(
            std::make_shared<ProceduralSource>(ProceduralSettings{i + 1, 9 + i % 3, format}));
        tails.push_back(streamer.textures().tail_page(id));
    }
    expect_ready_pages_match(streamer);
    // First fit, in order: the pages a tail's bytes need, and only those.
    std::vector<std::uint64_t> used;
    for (std::uint32_t i = 0; i < textures; ++i) {
        const TextureLayout layout = streamer.textures().layout(i);
        const std::uint64_t bytes = std::uint64_t(layout.mip_count - layout.tail_first_mip) *
                                    tile_format_info(layout.format).tile_bytes();
        auto room = std::find_if(used.begin(), used.end(),
                                 [&](std::uint64_t u) { return page_bytes - u >= bytes; });
        if (room == used.end()) {
            used.push_back(bytes);
        } else {
            *room += bytes;
        }
    }
    auto stats = streamer.statistics();
    EXPECT_LT(used.size(), 7u);
    EXPECT_EQ(stats.tail_pages, used.size());
    EXPECT_EQ(stats.packed_tails, textures - used.size());
    EXPECT_EQ(stats.table.pinned_pages, used.size());
    EXPECT_EQ(stats.table.resident_pages, used.size());
    std::set<std::uint64_t> offsets;
    for (PageIndex tail : tails) {
        const auto ready = streamer.ready_page(tail);
        ASSERT_TRUE(ready) << tail;
        EXPECT_TRUE(offsets.insert(ready->data).second) << "two tails at one place";
        EXPECT_EQ(ready->data % (32_KiB), 0u);
        EXPECT_LE(ready->offset + ready->bytes, page_bytes);
        if (ready->packed()) {
            EXPECT_FALSE(streamer.page_table().lookup(tail).has_value());
        }
    }
    // Asked for, as feedback does: ready, nothing committed or queued.
    streamer.poll_events();
    const StreamRequestResult result = streamer.request(tails);
    EXPECT_EQ(result.ready, textures);
    EXPECT_EQ(result.queued, 0u);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(10s));
    EXPECT_TRUE(streamer.poll_events().empty());
    EXPECT_EQ(streamer.statistics().table.resident_pages, used.size());

    // A page each: the budget of six pages holds six tails (with no page for packed levels,
    // which would take one of the six).
    StreamerSettings apart = settings(6);
    apart.pack_tails = false;
    apart.pack_levels = false;
    Streamer unpacked(*backend_, apart);
    std::size_t added = 0;
    try {
        for (; added < textures; ++added) {
            unpacked.add_texture(std::make_shared<ProceduralSource>(
                ProceduralSettings{std::uint32_t(added) + 1, 10}));
        }
        FAIL() << "twenty tail pages fitted a budget of six";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::budget_exhausted) << error.what();
    }
    EXPECT_EQ(added, 6u);
    EXPECT_EQ(unpacked.statistics().packed_tails, 0u);
}

// A camera flies over a large texture with a small budget; frames complete one frame late, as a
// GPU's do. Every request is served or still queued, never lost, and what is ready is right.
TEST_P(StreamerTest, SmallBudgetMovingCameraNeverLosesARequest) {
    auto s = settings(24);
    s.worker_threads = test::copy_threads(2);
    s.batch_pages = 4;
    // Each frame's pages are its whole view: only they are kept (a longer window would keep
    // the frames before too, and drop requests the moving view no longer fits).
    s.recent_frames = 1;
    Streamer streamer(*backend_, s);
    auto source = std::make_shared<test::PatternSource>(14, 9);
    const TextureId id = streamer.add_texture(source);
    FeedbackProcessor feedback(streamer.textures());
    const TextureLayout layout = streamer.textures().layout(id);
    std::map<PageIndex, std::uint64_t> ready_at;  // page -> event number of its latest ready
    std::map<PageIndex, std::uint64_t> asked_at;  // page -> event number when last requested
    std::map<PageIndex, bool> ready_when_asked;
    std::uint64_t event_number = 0;
    auto drain = [&] {
        for (const StreamerEvent& event : streamer.poll_events()) {
            ++event_number;
            if (event.kind == StreamerEventKind::ready) ready_at[event.page.page] = event_number;
        }
    };
    FrameId previous = 0;
    std::vector<PageRequest> last_requests;
    const int frames = test::under_thread_sanitizer ? 25 : 60;
    for (int f = 0; f < frames; ++f) {
        const FrameId frame = streamer.begin_frame();
        // The camera sees a 10 x 6 tile window of mip 0 moving diagonally, and a far area at
        // mip 3.
        std::vector<FeedbackEntry> entries;
        const std::uint32_t cx = std::uint32_t(f * 3) % (layout.mips[0].tiles_x - 10);
        const std::uint32_t cy = std::uint32_t(f * 2) % (layout.mips[0].tiles_y - 6);
        for (std::uint32_t y = cy; y < cy + 6; ++y) {
            for (std::uint32_t x = cx; x < cx + 10; ++x)
                entries.push_back(FeedbackEntry::make({id, 0, x, y}));
        }
        entries.push_back(
            FeedbackEntry::make({id, 3, std::uint32_t(f) % layout.mips[3].tiles_x, 1}));
        const FeedbackResult result = feedback.process(entries);
        drain();
        const std::uint64_t before = event_number;  // ready events after this serve the request
        streamer.request(result.requests);
        drain();
        for (const PageRequest& request : result.requests) {
            asked_at[request.page] = before;
            // This frame fences what it asked for: nothing can be evicted before we look. Queued
            // first: a worker may make a queued page ready between the two looks, and nothing
            // makes a ready page queued again meanwhile.
            const bool queued = streamer.is_queued(request.page);
            ready_when_asked[request.page] = streamer.is_ready(request.page);
            EXPECT_TRUE(ready_when_asked[request.page] || queued)
                << "frame " << f << ": page " << request.page << " was lost";
        }
        last_requests = result.requests;
        if (previous != 0) streamer.complete_frame(previous);
        previous = frame;
        std::this_thread::sleep_for(2ms);
        drain();
    }
    streamer.complete_frame(previous);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(120s))
        << streamer.pending_count() << " still pending";
    drain();
    streamer.rethrow_error();
    // The last frame's pages were all served: ready when asked, or ready since. (Some may have
    // been evicted since by older requests served after them.)
    for (const PageRequest& request : last_requests) {
        EXPECT_TRUE(
            ready_when_asked[request.page] ||
            (ready_at.count(request.page) && ready_at[request.page] > asked_at[request.page]))
            << "never served: " << request.page;
    }
    const auto stats = streamer.statistics();
    EXPECT_EQ(stats.dropped_requests, 0u);
    EXPECT_EQ(stats.failed_pages, 0u);
    EXPECT_GT(stats.table.evictions, 0u) << "the budget should have forced evictions";
    EXPECT_LE(stats.table.resident_pages, 24u);
    streamer.page_table().check_invariants();
    expect_ready_pages_match(streamer);
}

TEST_P(StreamerTest, FramesThatAreNotCompleteKeepTheirPages) {
    auto s = settings(8);
    s.recent_frames = 1;  // the frame fence alone keeps the first frame's pages
    Streamer streamer(*backend_, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(13, 2));
    const auto pages = all_pages(streamer.textures(), id);
    const std::vector<PageIndex> first(pages.begin(), pages.begin() + 7);
    const std::vector<PageIndex> second(pages.begin() + 7, pages.begin() + 14);
    const FrameId frame = streamer.begin_frame();
    streamer.request(first);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    const FrameId frame2 = streamer.begin_frame();
    streamer.request(second);
    // The budget (8: a tail and 7) is full of pages frame 1 uses: nothing can be evicted.
    EXPECT_FALSE(streamer.wait_idle(200ms));
    for (PageIndex page : first) EXPECT_TRUE(streamer.is_ready(page));
    EXPECT_TRUE(test::eventually([&] { return streamer.statistics().budget_stalls > 0; }, 30s))
        << "the worker found no room";
    for (PageIndex page : second) EXPECT_TRUE(streamer.is_queued(page)) << page;
    streamer.complete_frame(frame);
    // Frame 1's pages can go now, but frame 2, in flight, may still sample them: their
    // physical pages are held back and the second pages still wait.
    EXPECT_FALSE(streamer.wait_idle(200ms));
    EXPECT_TRUE(
        test::eventually([&] { return streamer.statistics().table.deferred_pages > 0; }, 30s))
        << "frame 1's pages were not held back";
    for (PageIndex page : second) EXPECT_TRUE(streamer.is_queued(page)) << page;
    streamer.complete_frame(frame2);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (PageIndex page : second) EXPECT_TRUE(streamer.is_ready(page));
    for (PageIndex page : first) EXPECT_FALSE(streamer.is_ready(page));
    streamer.complete_frame(streamer.page_table().current_frame());
    expect_ready_pages_match(streamer);
}

TEST_P(StreamerTest, CoarseMipsAreServedFirst) {
    auto s = settings(64);
    s.worker_threads = 1;
    s.batch_pages = 1;
    Streamer streamer(*backend_, s);
    auto source = std::make_shared<test::PatternSource>(13, 4);
    const TextureId id = streamer.add_texture(source);
    const TextureSet& set = streamer.textures();
    const TextureLayout layout = set.layout(id);
    source->held_page = 40;
    source->hold = true;
    const std::uint64_t fills = source->fills.load();
    streamer.request(std::vector<PageIndex>{set.global_page(id, 40)});  // keeps the worker busy
    while (source->fills.load() == fills) std::this_thread::sleep_for(1ms);
    std::vector<PageRequest> requests;
    for (std::uint64_t page : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(2)})
        requests.push_back({set.global_page(id, page), id, 0, 50});
    for (std::uint32_t mip : {2u, 4u, 3u}) {
        requests.push_back({set.global_page(id, layout.mips[mip].first_page), id, mip, 1});
    }
    streamer.request(requests);
    source->hold = false;
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    std::vector<std::uint32_t> mips;
    for (const StreamerEvent& event : streamer.poll_events()) {
        if (event.kind == StreamerEventKind::ready &&
            event.page.layout_page != layout.tail_page()) {
            mips.push_back(event.page.mip);
        }
    }
    ASSERT_EQ(mips.size(), 7u);
    EXPECT_EQ(std::vector<std::uint32_t>(mips.begin() + 1, mips.end()),
              (std::vector<std::uint32_t>{4, 3, 2, 0, 0, 0}));
}

// Only requests still pending count as cancelled: not a page being filled, a ready page, a page
// never asked for, nor the same page twice.
TEST_P(StreamerTest, CancelledRequestsCountOnlyPendingOnes) {
    auto s = settings(64);
    s.worker_threads = 1;
    s.batch_pages = 1;
    Streamer streamer(*backend_, s);
    auto source = std::make_shared<test::PatternSource>(13, 4);
    const TextureId id = streamer.add_texture(source);
    const TextureSet& set = streamer.textures();
    source->held_page = 40;
    source->hold = true;
    const std::uint64_t fills = source->fills.load();
    const PageIndex held = set.global_page(id, 40);
    streamer.request(std::vector<PageIndex>{held});  // keeps the worker busy
    while (source->fills.load() == fills) std::this_thread::sleep_for(1ms);
    std::vector<PageIndex> pending;
    for (std::uint64_t page = 0; page < 6; ++page) pending.push_back(set.global_page(id, page));
    ASSERT_EQ(streamer.request(pending).queued, 6u);
    EXPECT_EQ(streamer.statistics().cancelled_requests, 0u);

    const PageIndex cancelled[] = {pending[0], pending[1],        pending[0],
                                   held,       set.tail_page(id), set.global_page(id, 7)};
    streamer.cancel(cancelled);
    EXPECT_EQ(streamer.statistics().cancelled_requests, 2u);
    EXPECT_EQ(streamer.pending_count(), 4u);
    streamer.clear_pending();
    EXPECT_EQ(streamer.statistics().cancelled_requests, 6u);
    source->hold = false;
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    streamer.clear_pending();  // nothing pending: nothing counted
    streamer.cancel(pending);
    const StreamerStatistics statistics = streamer.statistics();
    EXPECT_EQ(statistics.cancelled_requests, 6u);
    EXPECT_TRUE(streamer.is_ready(held)) << "cancelling a page being filled does not stop it";
}

TEST_P(StreamerTest, ShutdownWithWorkInFlightNeitherHangsNorLeaks) {
    auto source = std::make_shared<test::PatternSource>(13, 6);
    source->delay = 10ms;
    const auto start = std::chrono::steady_clock::now();
    {
        auto s = settings(16);
        s.batch_pages = 2;
        Streamer streamer(*backend_, s);
        const TextureId id = streamer.add_texture(source);
        streamer.begin_frame();
        streamer.request(all_pages(streamer.textures(), id));  // far more than the budget
        std::this_thread::sleep_for(30ms);
        EXPECT_GT(streamer.pending_count(), 0u);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
    EXPECT_LT(source->fills.load(), 40u) << "shutdown should not drain the queue";
}

TEST_P(StreamerTest, WorkerErrorsSurfaceAndOtherPagesStillStream) {
    auto s = settings(32);
    std::atomic<int> reported{0};
    s.on_error = [&](const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
        ++reported;
    };
    Streamer streamer(*backend_, s);
    auto source = std::make_shared<test::PatternSource>(11, 8);
    source->failing_pages = {2};
    const TextureId id = streamer.add_texture(source);
    const auto pages = all_pages(streamer.textures(), id);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(streamer.is_ready(pages[i]), i != 2);
    try {
        streamer.rethrow_error();
        ADD_FAILURE() << "the worker's error was swallowed";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
        EXPECT_NE(error.detail().find("made to fail"), std::string::npos);
    }
    EXPECT_FALSE(streamer.take_error());
    EXPECT_EQ(reported.load(), 1);
    EXPECT_EQ(streamer.statistics().failed_pages, 1u);
    // Once the source works, asking again serves the page.
    source->failing_pages.clear();
    streamer.request(std::vector<PageIndex>{pages[2]});
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    EXPECT_TRUE(streamer.is_ready(pages[2]));
    expect_ready_pages_match(streamer);
}

TEST_P(StreamerTest, TablesThatMapIntoTheRegionServePagesThere) {
    auto s = settings(32);
    s.table.map_into_region = true;
    s.table.pool.map_windows = false;
    Streamer streamer(*backend_, s);
    const TextureId id =
        streamer.add_texture(std::make_shared<ProceduralSource>(ProceduralSettings{21, 9}));
    const auto pages = all_pages(streamer.textures(), id);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    for (PageIndex page : pages) {
        const auto ready = streamer.ready_page(page);
        ASSERT_TRUE(ready);
        EXPECT_EQ(ready->data, streamer.page_table().address_of(ready->table_page) + ready->offset);
    }
    expect_ready_pages_match(streamer);
}

TEST_P(StreamerTest, RequestsAreCheckedAndBounded) {
    auto s = settings(32);
    s.max_pending = 4;
    s.worker_threads = 1;
    s.batch_pages = 1;
    Streamer streamer(*backend_, s);
    auto source = std::make_shared<test::PatternSource>(12, 3);
    const TextureId id = streamer.add_texture(source);
    EXPECT_THROW(streamer.request(std::vector<PageIndex>{streamer.textures().pages_used()}), Error);
    EXPECT_EQ(streamer.pending_count(), 0u);
    source->delay = 20ms;
    const auto pages = all_pages(streamer.textures(), id);
    const auto result = streamer.request(std::span(pages).first(12));
    EXPECT_EQ(result.queued + result.dropped, 12u);
    EXPECT_GE(result.dropped, 12u - 4u - 1u);  // at most one taken by the worker meanwhile
    EXPECT_LE(streamer.pending_count(), 4u);
    EXPECT_EQ(streamer.statistics().dropped_requests, result.dropped);
    // The tail is ready from the start and stays pinned.
    const auto again = streamer.request(std::vector<PageIndex>{streamer.textures().tail_page(id)});
    EXPECT_EQ(again.ready, 1u);
    streamer.clear_pending();
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
}

// A page evicted while request() touches it is requested again; meanwhile another thread asks
// for it too and it is committed and filled again. The fresh ready entry stays: request() drops
// only the entry it saw, which was stale.
TEST_P(StreamerTest, ARequestKeepsTheReadyEntryThatAnotherThreadMadeMeanwhile) {
    if (!detail::test_points_built) GTEST_SKIP() << "needs -DVTPAGE_TEST_POINTS=ON";
    auto s = settings(16);
    Streamer streamer(*backend_, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 4));
    const PageIndex page = streamer.textures().base_page(id);
    streamer.request(std::span(&page, 1));
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    ASSERT_TRUE(streamer.is_ready(page));
    const std::uint64_t first_generation = streamer.ready_page(page)->generation;

    const std::thread::id requester = std::this_thread::get_id();
    std::atomic<int> step{0};
    bool refilled = false;
    test::TestPointHandlerGuard guard([&](std::string_view point) {
        if (std::this_thread::get_id() != requester) return;
        if (point == "streamer.request.before_touch" && step.exchange(1) == 0) {
            streamer.page_table().evict(std::span(&page, 1));  // seen ready, now gone
        } else if (point == "streamer.request.touched_page_gone" && step.exchange(2) == 1) {
            std::thread other([&] { streamer.request(std::span(&page, 1)); });
            other.join();
            const auto deadline = std::chrono::steady_clock::now() + 60s;
            while (!streamer.is_ready(page) && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(1ms);
            refilled = streamer.is_ready(page);
        }
    });
    streamer.request(std::span(&page, 1));
    ASSERT_EQ(step.load(), 2) << "the points were not reached";
    ASSERT_TRUE(refilled);
    EXPECT_TRUE(streamer.is_ready(page)) << "the fresh entry was dropped";
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    const auto ready = streamer.ready_page(page);
    ASSERT_TRUE(ready);
    EXPECT_GT(ready->generation, first_generation);
    EXPECT_TRUE(streamer.page_table().is_resident(page));
    expect_ready_pages_match(streamer);
}

// A queue that holds nothing would drop every request: refused when the streamer is made.
TEST_P(StreamerTest, AQueueOfNoRequestsIsRefused) {
    auto s = settings(8);
    s.max_pending = 0;
    try {
        Streamer streamer(*backend_, s);
        FAIL() << "a streamer with max_pending 0 was made";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
        EXPECT_NE(std::string(error.what()).find("max_pending=0"), std::string::npos)
            << error.what();
    }
}

// Windows of recent frames and holds outside their ranges are refused with the number.
TEST_P(StreamerTest, RecentFramesAndHoldsOutsideTheirRangesAreRefused) {
    auto refusal = [&](const StreamerSettings& s) -> std::string {
        try {
            Streamer streamer(*backend_, s);
        } catch (const Error& error) {
            if (error.code() == Errc::invalid_argument) return error.what();
        }
        return "made";
    };
    auto s = settings(8);
    s.recent_frames = 0;
    EXPECT_NE(refusal(s).find("recent_frames=0"), std::string::npos) << refusal(s);
    s = settings(8);
    s.refault_hold_frames = 65537;
    EXPECT_NE(refusal(s).find("refault_hold_frames=65537"), std::string::npos) << refusal(s);
    s.refault_hold_frames = 0;  // never held
    EXPECT_EQ(refusal(s), "made");
    s.file_reads.page_cache_copiers = 65;
    EXPECT_NE(refusal(s).find("page_cache_copiers=65"), std::string::npos) << refusal(s);
    s.file_reads.page_cache_copiers = 0;
    s.file_reads.decoded_pages_kept = StreamerFileReads::max_decoded_pages_kept + 1;
    EXPECT_NE(refusal(s).find("decoded_pages_kept=4097"), std::string::npos) << refusal(s);
    s.file_reads.decoded_pages_kept = StreamerFileReads::max_decoded_pages_kept;
    EXPECT_EQ(refusal(s), "made");
}

// bake -> stream -> the streamed pages show the image at mip 0 and its box filter at every other
// mip (borders included).
TEST_P(StreamerTest, BakedFilesStreamTheImageAndItsBoxFilteredMips) {
    test::TemporaryFolder folder;
    const RgbaImage image = test::make_test_image(400, 512, 12);
    const std::string path = folder.file("image.vtex");
    bake_texture(image, path);
    Streamer streamer(*backend_, settings(32));
    const TextureId id = streamer.add_texture(std::make_shared<BakedFileSource>(path));
    const TextureSet& set = streamer.textures();
    const TextureLayout layout = set.layout(id);
    ASSERT_EQ((layout.mip_count - 1), 9u);
    streamer.request(all_pages(set, id));
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    const auto mips = test::reference_mips(image, layout.width);
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        const std::uint32_t size = layout.mips[mip].width;
        for (std::uint32_t ty = 0; ty < layout.mips[mip].tiles_y; ++ty) {
            for (std::uint32_t tx = 0; tx < layout.mips[mip].tiles_x; ++tx) {
                const TileLocation where = layout.locate(mip, tx, ty);
                const auto ready = streamer.ready_page(set.base_page(id) + where.page);
                ASSERT_TRUE(ready);
                std::vector<std::byte> tile(tile_bytes);
                backend_->read(tile.data(), ready->data + where.byte_offset(), tile_bytes);
                for (std::uint32_t y = 0; y < tile_size; ++y) {
                    for (std::uint32_t x = 0; x < tile_size; ++x) {
                        const std::uint32_t lx = level_texel(tx, x, size),
                                            ly = level_texel(ty, y, size);
                        const std::uint8_t* want = &mips[mip][(std::size_t(ly) * size + lx) * 4];
                        ASSERT_EQ(std::memcmp(tile.data() + texel_offset(x, y), want, 4), 0)
                            << "mip " << mip << " tile " << tx << "," << ty << " texel " << x << ","
                            << y;
                        if (mip == 0 && lx < image.width && ly < image.height) {
                            ASSERT_EQ(
                                std::memcmp(want,
                                            &image.texels[(std::size_t(ly) * image.width + lx) * 4],
                                            4),
                                0);
                        }
                    }
                }
            }
        }
    }
}

// Version 2 files stream too; a page whose stored bytes are damaged is marked failed, named in
// the error, and the others still stream.
TEST_P(StreamerTest, BakedArchivesStreamAndADamagedPageIsMarkedFailed) {
    test::TemporaryFolder folder;
    const RgbaImage image = test::make_test_image(1000, 700, 5);
    const std::string path = folder.file("image.vtex");
    test::write_rgba8_archive(image, path);
    const StoredExtent extent = PageArchive(path).stored_extent(2);
    {
        std::FILE* file = std::fopen(path.c_str(), "r+b");
        ASSERT_TRUE(file);
        std::fseek(file, long(extent.offset + extent.bytes / 2), SEEK_SET);
        const int byte = std::fgetc(file);
        std::fseek(file, long(extent.offset + extent.bytes / 2), SEEK_SET);
        std::fputc(byte ^ 0x20, file);
        std::fclose(file);
    }
    auto s = settings(32);
    std::atomic<int> reported{0};
    s.on_error = [&](const Error&) { ++reported; };
    Streamer streamer(*backend_, s);
    const auto source = std::make_shared<BakedFileSource>(path);
    EXPECT_EQ(source->version(), 4);
    const TextureId id = streamer.add_texture(source);
    const TextureLayout layout = streamer.textures().layout(id);
    ASSERT_EQ(layout.shape(), (TextureShape{1000, 700, TileFormat::rgba8}));
    ASSERT_EQ(layout.page_count, 8u);
    const auto pages = all_pages(streamer.textures(), id);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(30s));
    for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(streamer.is_ready(pages[i]), i != 2);
    try {
        streamer.rethrow_error();
        ADD_FAILURE() << "the damaged page's error was swallowed";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
        EXPECT_NE(error.detail().find("page 2"), std::string::npos) << error.what();
    }
    EXPECT_EQ(reported.load(), 1);
    EXPECT_EQ(streamer.statistics().failed_pages, 1u);
    expect_ready_pages_match(streamer);
    // Mip 0's first tile holds the image's texels.
    const auto ready = streamer.ready_page(pages[0]);
    ASSERT_TRUE(ready);
    const auto got = test::read_device_page(*backend_, ready->data);
    for (std::uint32_t y = 0; y < tile_payload; ++y) {
        for (std::uint32_t x = 0; x < tile_payload; ++x) {
            ASSERT_EQ(std::memcmp(&got[texel_offset(x + tile_border, y + tile_border)],
                                  &image.texels[(std::size_t(y) * 1000 + x) * 4], 4),
                      0)
                << x << "," << y;
        }
    }
}

// Coarse levels of many textures share a few pages and come and go apart. Twelve textures take
// turns on screen (a frame completes one frame late) while two pages may hold their levels: a
// 3 x 3 page with room for two, a 2 x 2 page with room for eight. Levels are evicted to make
// room, never while a frame that asked for them is incomplete, and their places are filled again
// only once the frames begun before the eviction was reported are complete. At the end each
// level of the texture on screen holds its source's bytes.
TEST_P(StreamerTest, CoarseLevelsOfManyTexturesShareEvictablePagesUnderFrameFences) {
    constexpr std::size_t textures = 12;
    auto s = settings(16);
    s.packed_level_pages = 2;
    s.recent_frames = 1;  // levels of earlier frames are fair victims: the fences are tested
    std::mutex mutex;
    // level -> the last frame whose request found it ready and kept it: recorded only then,
    // since a level that the request found evicted was a fair victim before it was asked for.
    std::map<PageIndex, FrameId> asked_in;
    std::set<PageIndex> levels;  // the coarse levels of all textures (not their packed tails)
    // (host page, offset) -> the frame current when the level there was reported evicted
    std::map<std::pair<PageIndex, std::uint64_t>, FrameId> evicted_at;
    std::size_t fence_violations = 0, reuse_violations = 0, packed_ready = 0, packed_evicted = 0;
    PageTable* table = nullptr;
    s.on_evicted = [&](std::span<const StreamedPage> pages) {
        std::lock_guard lock(mutex);
        for (const StreamedPage& page : pages) {
            if (!page.packed()) continue;
            ++packed_evicted;
            if (asked_in[page.page] > table->completed_frame()) ++fence_violations;
            evicted_at[{page.table_page, page.offset}] = table->current_frame();
        }
    };
    s.on_ready = [&](std::span<const StreamedPage> pages) {
        std::lock_guard lock(mutex);
        for (const StreamedPage& page : pages) {
            if (!page.packed() || !levels.count(page.page)) continue;  // not a packed tail
            ++packed_ready;
            auto evicted = evicted_at.find({page.table_page, page.offset});
            if (evicted != evicted_at.end() && evicted->second > table->completed_frame()) {
                ++reuse_violations;
            }
        }
    };
    Streamer streamer(*backend_, s);
    table = &streamer.page_table();
    std::vector<std::array<PageIndex, 2>> coarse;  // mips 2 (3 x 3) and 3 (2 x 2) of 2^10
    for (std::size_t i = 0; i < textures; ++i) {
        const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
        const TextureLayout layout = streamer.textures().layout(id);
        const PageIndex base = streamer.textures().base_page(id);
        coarse.push_back({base + layout.mips[2].first_page, base + layout.mips[3].first_page});
        std::lock_guard lock(mutex);
        levels.insert(coarse.back().begin(), coarse.back().end());
    }
    FrameId previous = 0;
    for (std::size_t f = 0; f < 72; ++f) {
        const FrameId frame = streamer.begin_frame();
        for (PageIndex page : coarse[(f / 3) % textures]) {
            // One page a call, so that the result says whether this level was found ready.
            if (streamer.request(std::span(&page, 1)).ready == 1) {
                std::lock_guard lock(mutex);
                asked_in[page] = frame;
            }
        }
        if (previous != 0) streamer.complete_frame(previous);
        previous = frame;
        std::this_thread::sleep_for(2ms);
    }
    streamer.complete_frame(previous);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    const auto& last = coarse[(71 / 3) % textures];
    for (PageIndex page : last) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_match(streamer);
    const StreamerStatistics stats = streamer.statistics();
    std::lock_guard lock(mutex);
    EXPECT_FALSE(asked_in.empty()) << "no request found a level ready: nothing was fenced";
    EXPECT_EQ(fence_violations, 0u);
    EXPECT_EQ(reuse_violations, 0u);
    EXPECT_EQ(stats.level_pages, 2u);
    EXPECT_LE(stats.packed_levels, 10u) << "two 3 x 3 and eight 2 x 2 places";
    EXPECT_GT(stats.evicted_levels, 0u) << "twelve textures' levels took turns in ten places";
    EXPECT_EQ(packed_evicted, stats.evicted_levels);
    EXPECT_EQ(packed_ready, stats.packed_levels + stats.evicted_levels);
    EXPECT_EQ(stats.failed_pages, 0u);
    EXPECT_EQ(stats.table.pinned_pages, stats.tail_pages + 2);
    streamer.page_table().check_invariants();
}

// A view that needs more coarse levels of one shape than their places hold keeps those it has:
// a level asked for in a frame that also asks for the resident ones is superseded, not traded
// for one of them (which the view would ask for again next frame, for ever). Asked for in a
// frame that no longer wants the others, it takes a place.
TEST_P(StreamerTest, ALevelAskedForBesideTheResidentOnesIsSupersededNotTradedForOne) {
    auto s = settings(16);
    s.packed_level_pages = 1;
    s.recent_frames = 1;  // the rule within one frame
    Streamer streamer(*backend_, s);
    std::vector<PageIndex> level;  // mip 2 (3 x 3 tiles) of three textures: a page holds two
    for (std::uint32_t i = 0; i < 3; ++i) {
        const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
        level.push_back(streamer.textures().base_page(id) +
                        streamer.textures().layout(id).mips[2].first_page);
    }
    const auto ask = [&](std::initializer_list<std::size_t> which) {
        for (std::size_t i : which) streamer.request(std::span(&level[i], 1));
    };
    FrameId frame = streamer.begin_frame();
    ask({0, 1});
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.complete_frame(frame);
    for (int round = 0; round < 3; ++round) {
        frame = streamer.begin_frame();
        ask({0, 1, 2});
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
        streamer.complete_frame(frame);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    }
    EXPECT_TRUE(streamer.is_ready(level[0]));
    EXPECT_TRUE(streamer.is_ready(level[1]));
    EXPECT_FALSE(streamer.is_ready(level[2]));
    EXPECT_EQ(streamer.statistics().superseded_requests, 3u);
    EXPECT_EQ(streamer.statistics().evicted_levels, 0u);
    frame = streamer.begin_frame();
    ask({2});
    streamer.complete_frame(frame);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    EXPECT_TRUE(streamer.is_ready(level[2]));
    EXPECT_EQ(streamer.statistics().evicted_levels, 1u);
    EXPECT_EQ(streamer.statistics().superseded_requests, 3u);
    expect_ready_pages_match(streamer);
}

// A view that needs more pages than the budget holds keeps the pages it has: the pages it asks
// for beyond them are superseded (dropped and counted), not traded for pages it samples, which
// it would ask for again the next frame, for ever. Reads stay bounded and the resident set
// settles; once the view shrinks to what fits, every page it asks for becomes ready.
TEST_P(StreamerTest, AViewBeyondTheBudgetSettlesInsteadOfThrashing) {
    auto s = settings(8);
    s.packed_level_pages = 1;
    Streamer streamer(*backend_, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 7));
    const PageIndex base = streamer.textures().base_page(id);
    std::vector<PageIndex> view;  // 12 pages of mip 0: more than the budget's 8
    for (PageIndex i = 0; i < 12; ++i) view.push_back(base + i);
    FrameId previous = 0;
    const auto frame_asking = [&](std::span<const PageIndex> pages) {
        const FrameId frame = streamer.begin_frame();
        streamer.request(pages);
        if (previous != 0) streamer.complete_frame(previous);
        previous = frame;
        // Idle once every page asked for is ready, superseded or waiting for `previous`.
        return streamer.wait_idle(std::chrono::milliseconds(50));
    };
    // Frames until one ends with nothing pending (the view has taken what fits).
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::size_t frames = 0;
    while (!frame_asking(view) || streamer.statistics().superseded_requests == 0) {
        ASSERT_LT(std::chrono::steady_clock::now(), deadline)
            << "the view never settled: " << streamer.statistics().pages_filled << " pages read in "
            << frames << " frames";
        ++frames;
    }
    streamer.rethrow_error();
    const StreamerStatistics settled = streamer.statistics();
    std::vector<PageIndex> resident;
    for (PageIndex page : view) {
        if (streamer.is_ready(page)) resident.push_back(page);
    }
    EXPECT_GE(resident.size(), 3u) << "what the budget holds beside the tail and a level host";
    EXPECT_LE(settled.pages_filled, view.size() + 2) << "after " << frames << " frames";
    for (int frame = 0; frame < 20; ++frame) frame_asking(view);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    const StreamerStatistics after = streamer.statistics();
    EXPECT_EQ(after.pages_filled, settled.pages_filled) << "no page read again";
    EXPECT_GE(after.superseded_requests, settled.superseded_requests + 20);
    for (PageIndex page : resident) EXPECT_TRUE(streamer.is_ready(page)) << page;
    // The view shrinks to pages that fit, most of them not resident: they take the room of
    // those the view no longer wants.
    std::vector<PageIndex> smaller;
    for (PageIndex page : view) {
        if (!streamer.is_ready(page) && smaller.size() < 3) smaller.push_back(page);
    }
    ASSERT_FALSE(smaller.empty());
    // Pages the larger view asked for stay its own for recent_frames frames.
    for (FrameId frame = 0; frame <= s.recent_frames + 2; ++frame) frame_asking(smaller);
    streamer.complete_frame(previous);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    for (PageIndex page : smaller) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_match(streamer);
    streamer.page_table().check_invariants();
}

// A view runs its frames against the streamer as a renderer does: each frame asks for some
// pages, the frame before completes, and the streamer gets a moment to work.
class ViewFrames {
public:
    explicit ViewFrames(Streamer& streamer) : streamer_(streamer) {}
    ~ViewFrames() {
        if (previous_ != 0) streamer_.complete_frame(previous_);
    }
    void ask(std::span<const PageIndex> pages) {
        const FrameId frame = streamer_.begin_frame();
        streamer_.request(pages);
        if (previous_ != 0) streamer_.complete_frame(previous_);
        previous_ = frame;
        streamer_.wait_idle(std::chrono::milliseconds(50));
    }
    // Asks for the same pages frame after frame, at least `frames` times, until `done` holds (a
    // slow machine takes more frames; 60 s at most).
    template <class Done>
    bool ask_until(std::span<const PageIndex> pages, std::size_t frames, Done done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (std::size_t frame = 0;; ++frame) {
            if (frame >= frames && done()) return true;
            if (std::chrono::steady_clock::now() > deadline) return false;
            ask(pages);
        }
    }

private:
    Streamer& streamer_;
    FrameId previous_ = 0;
};

bool all_ready(const Streamer& streamer, std::span<const PageIndex> pages) {
    return std::ranges::all_of(pages, [&](PageIndex page) { return streamer.is_ready(page); });
}

// Mip-0 pages [first, first + count) of a texture.
std::vector<PageIndex> mip0_pages(const Streamer& streamer, TextureId id, PageIndex first,
                                  std::size_t count) {
    std::vector<PageIndex> pages(count);
    std::iota(pages.begin(), pages.end(), streamer.textures().base_page(id) + first);
    return pages;
}

// What 40 frames of a view of 10 pages cost when each frame's feedback names only half of them
// (a feedback pass at a fraction of the resolution samples a different pixel of each block every
// frame), beside a budget that holds 6 of them.
struct HalfViewRun {
    StreamerStatistics statistics;
    std::size_t free_pages = 0;  // the budget's pages beside the pinned ones
    std::size_t view_pages_ready = 0;
    std::uint64_t filled_in_last_20_frames = 0;
};

HalfViewRun run_half_view(Backend& backend, StreamerSettings s) {
    s.packed_level_pages = 1;  // pinned: the tail's page and one level host; 6 pages left
    Streamer streamer(backend, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 7));
    const std::vector<PageIndex> view = mip0_pages(streamer, id, 0, 10);
    HalfViewRun run;
    {
        ViewFrames frames(streamer);
        for (int frame = 0; frame < 40; ++frame) {
            if (frame == 20) run.filled_in_last_20_frames = streamer.statistics().pages_filled;
            frames.ask(std::span(view).subspan(frame % 2 == 0 ? 0 : 5, 5));
        }
    }
    EXPECT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    run.statistics = streamer.statistics();
    run.free_pages = 8 - run.statistics.tail_pages - run.statistics.level_pages;
    run.filled_in_last_20_frames = run.statistics.pages_filled - run.filled_in_last_20_frames;
    for (PageIndex page : view) run.view_pages_ready += streamer.is_ready(page) ? 1 : 0;
    streamer.page_table().check_invariants();
    return run;
}

// The view keeps what it asked for in its last recent_frames frames: half a view named each
// frame does not evict the other half. Each page is read about once, the budget holds the
// view's pages, and the statistics say the view is over budget by the 4 pages that do not fit.
// With recent_frames = 1 the same view evicts and reads its pages again for ever.
TEST_P(StreamerTest, AViewWhoseFeedbackNamesHalfItsPagesEachFrameSettles) {
    const HalfViewRun kept = run_half_view(*backend_, settings(8));
    EXPECT_LE(kept.statistics.pages_filled, 10u + 2u) << "pages read for a view of 10";
    EXPECT_EQ(kept.filled_in_last_20_frames, 0u) << "the view settled";
    ASSERT_GE(kept.free_pages, 6u);
    EXPECT_EQ(kept.view_pages_ready, kept.free_pages) << "the free pages all hold view pages";
    EXPECT_EQ(kept.statistics.over_budget_pages, 10u - kept.free_pages);
    EXPECT_EQ(kept.statistics.recent_pages, 10u);
    EXPECT_LE(kept.statistics.refaulted_pages, 2u);

    StreamerSettings one_frame = settings(8);
    one_frame.recent_frames = 1;
    const HalfViewRun traded = run_half_view(*backend_, one_frame);
    EXPECT_GE(traded.statistics.pages_filled, 30u) << "a view trading its pages for each other";
    EXPECT_GE(traded.filled_in_last_20_frames, 20u);
    EXPECT_GE(traded.statistics.refaulted_pages, 20u);
}

// Over budget is reported while the view needs more than the budget holds beside its pinned
// pages, and not once the view shrinks to what fits or the budget grows to hold it.
TEST_P(StreamerTest, OverBudgetEndsWhenTheViewShrinksOrTheBudgetGrows) {
    auto s = settings(8);
    s.packed_level_pages = 1;
    Streamer streamer(*backend_, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 3));
    const std::vector<PageIndex> view = mip0_pages(streamer, id, 0, 10);
    ViewFrames frames(streamer);
    ASSERT_TRUE(frames.ask_until(view, 4, [&] {
        const BudgetDemand demand = streamer.budget_demand();
        return demand.resident_recent_pages == demand.free_pages;
    })) << "the free pages never all held the view's";
    const StreamerStatistics over = streamer.statistics();
    EXPECT_EQ(over.over_budget_pages, 10u - (8u - over.tail_pages - over.level_pages));
    const BudgetDemand demand = streamer.budget_demand();
    EXPECT_EQ(demand.over_budget_pages, over.over_budget_pages);
    EXPECT_EQ(demand.resident_recent_pages, demand.free_pages) << "every free page is the view's";
    EXPECT_DOUBLE_EQ(demand.sampled_share(), 1.0);

    // Four pages, two of them not resident: they fit once the rest leave the window.
    std::vector<PageIndex> smaller;
    for (PageIndex page : view) {
        if (streamer.is_ready(page) ? smaller.size() < 2 : smaller.size() < 4)
            smaller.push_back(page);
    }
    ASSERT_EQ(smaller.size(), 4u);
    EXPECT_TRUE(frames.ask_until(smaller, s.recent_frames + 2,
                                 [&] { return all_ready(streamer, smaller); }));
    EXPECT_EQ(streamer.statistics().over_budget_pages, 0u);
    EXPECT_EQ(streamer.statistics().recent_pages, 4u);
    for (PageIndex page : smaller) EXPECT_TRUE(streamer.is_ready(page)) << page;

    // The whole view again, then a budget that holds it: every page comes in.
    for (int frame = 0; frame < 3; ++frame) frames.ask(view);
    EXPECT_GT(streamer.statistics().over_budget_pages, 0u);
    streamer.set_budget(12 * page_bytes);
    for (int frame = 0; frame < 4; ++frame) frames.ask(view);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    frames.ask(view);
    EXPECT_EQ(streamer.statistics().over_budget_pages, 0u);
    for (PageIndex page : view) EXPECT_TRUE(streamer.is_ready(page)) << page;
    streamer.rethrow_error();
}

// A view over budget gets its coarser levels first: a page of mip 1 takes the room of a mip-0
// page that the same frame asked for, and that page, asked for again, does not take it back.
TEST_P(StreamerTest, ACoarserLevelTakesTheRoomOfAFinerOneTheViewAlsoWants) {
    auto s = settings(8);
    s.packed_level_pages = 1;
    Streamer streamer(*backend_, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 5));
    const TextureSet& set = streamer.textures();
    const StreamerStatistics pinned = streamer.statistics();
    const std::size_t free = 8 - pinned.tail_pages - pinned.level_pages;
    const std::vector<PageIndex> fine = mip0_pages(streamer, id, 0, free);
    ASSERT_GT(set.layout(id).mips[1].pages_x * set.layout(id).mips[1].pages_y, 1u)
        << "mip 1 is streamed a page at a time, not packed";
    const PageIndex coarse = set.base_page(id) + set.layout(id).mips[1].first_page;
    std::uint64_t filled = 0;
    {
        ViewFrames frames(streamer);
        ASSERT_TRUE(frames.ask_until(fine, 3, [&] { return all_ready(streamer, fine); }))
            << "the fine pages that fit were never all ready";
        filled = streamer.statistics().pages_filled;
        std::vector<PageIndex> both = fine;
        both.insert(both.begin(), coarse);  // coarse first, as the feedback orders them
        for (int frame = 0; frame < 12; ++frame) frames.ask(both);
    }
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    EXPECT_TRUE(streamer.is_ready(coarse));
    std::size_t fine_ready = 0;
    for (PageIndex page : fine) fine_ready += streamer.is_ready(page) ? 1 : 0;
    EXPECT_EQ(fine_ready, free - 1);
    EXPECT_EQ(streamer.statistics().pages_filled, filled + 1) << "the coarse page alone";
    streamer.rethrow_error();
}

// Reads for a view that turns between two halves of 5 pages each every 9 frames, for 120 frames,
// beside 6 free pages: each turn asks again for pages the last one evicted.
struct TurningViewRun {
    StreamerStatistics statistics;
    bool first_half_ready_after_budget_grew = false;
};

TurningViewRun run_turning_view(Backend& backend, FrameId hold_frames) {
    StreamerSettings s = test::streamer_test_settings(8);
    s.packed_level_pages = 1;  // pinned: the tail's page and one level host; 6 pages left
    s.refault_hold_frames = hold_frames;
    Streamer streamer(backend, s);
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 9));
    const std::vector<PageIndex> view = mip0_pages(streamer, id, 0, 10);
    const std::span<const PageIndex> first = std::span(view).first(5);
    const std::span<const PageIndex> second = std::span(view).subspan(5);
    TurningViewRun run;
    ViewFrames frames(streamer);
    for (int frame = 0; frame < 120; ++frame) frames.ask((frame / 9) % 2 == 0 ? first : second);
    EXPECT_TRUE(streamer.wait_idle_while_progressing(60s));
    run.statistics = streamer.statistics();
    // A budget that holds the whole view releases what was held, once the view has fitted it
    // for a window of recent frames.
    streamer.set_budget(16 * page_bytes);
    for (FrameId frame = 0; frame < s.recent_frames + 2; ++frame) frames.ask(view);
    EXPECT_TRUE(streamer.wait_idle_while_progressing(60s));
    frames.ask(view);
    run.first_half_ready_after_budget_grew = std::all_of(
        first.begin(), first.end(), [&](PageIndex page) { return streamer.is_ready(page); });
    streamer.rethrow_error();
    streamer.page_table().check_invariants();
    return run;
}

// Over budget, a page asked for again soon after its eviction is held rather than read again:
// the turning view reads each of its pages at most twice, where without holds it reads them
// again at every turn. Holds end when the budget grows to hold the view.
TEST_P(StreamerTest, AViewOverBudgetStopsChasingThePagesItTradedAway) {
    const TurningViewRun held = run_turning_view(*backend_, 64);
    EXPECT_GT(held.statistics.held_pages, 0u);
    EXPECT_GT(held.statistics.held_requests, 0u);
    EXPECT_LE(held.statistics.pages_filled, 2u * 10u + 2u) << "tail and level host beside";
    EXPECT_TRUE(held.first_half_ready_after_budget_grew);

    const TurningViewRun chased = run_turning_view(*backend_, 0);
    std::printf(
        "  a view turning between two halves over budget, 120 frames: %llu pages read "
        "with holds (%llu held, %llu requests held back), %llu without\n",
        static_cast<unsigned long long>(held.statistics.pages_filled),
        static_cast<unsigned long long>(held.statistics.held_pages),
        static_cast<unsigned long long>(held.statistics.held_requests),
        static_cast<unsigned long long>(chased.statistics.pages_filled));
    EXPECT_EQ(chased.statistics.held_pages, 0u);
    EXPECT_GE(chased.statistics.pages_filled, 40u) << "about 5 pages read at each of 13 turns";
    EXPECT_TRUE(chased.first_half_ready_after_budget_grew);
}

// A view that moves within what the budget holds is never over budget and never reads a page
// it evicted within its recent frames.
TEST_P(StreamerTest, AMovingViewThatFitsIsNeverOverBudget) {
    Streamer streamer(*backend_, settings(32));
    const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(12, 9));
    ViewFrames frames(streamer);
    for (PageIndex first = 0; first + 4 <= 40; ++first) {
        frames.ask(mip0_pages(streamer, id, first, 4));
        EXPECT_EQ(streamer.statistics().over_budget_pages, 0u) << "frame " << first;
    }
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.refaulted_pages, 0u);
    EXPECT_EQ(stats.superseded_requests, 0u);
    EXPECT_LE(stats.recent_pages, 4u + 7u);
    streamer.rethrow_error();
}

// A page each for tails, no packed levels: each texture pins one page. A budget of four takes
// four textures; the fifth is refused before anything changes, saying both numbers.
TEST_P(StreamerTest, ATextureThatWouldPinMoreThanTheBudgetIsRefusedWithTheNumbers) {
    auto s = settings(4);
    s.pack_tails = false;
    s.pack_levels = false;
    Streamer streamer(*backend_, s);
    for (std::uint32_t i = 0; i < 4; ++i) {
        streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
    }
    EXPECT_EQ(streamer.pinned_pages().total(), 4u);
    try {
        streamer.add_texture(std::make_shared<test::PatternSource>(10, 4));
        ADD_FAILURE() << "a fifth texture was added to a budget of four pages";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::budget_exhausted);
        EXPECT_NE(error.arguments().find("pinned_pages=5, budget_pages=4"), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(streamer.textures().texture_count(), 4u);
    EXPECT_EQ(streamer.statistics().tail_pages, 4u);
    EXPECT_EQ(streamer.pinned_pages().total(), 4u);
    streamer.rethrow_error();
}

// Lowering the budget below the pinned pages is refused, and nothing changes; to them is fine.
TEST_P(StreamerTest, ABudgetBelowThePinnedPagesIsRefused) {
    auto s = settings(6);
    s.pack_tails = false;
    s.pack_levels = false;
    Streamer streamer(*backend_, s);
    for (std::uint32_t i = 0; i < 4; ++i) {
        streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
    }
    try {
        streamer.set_budget(3 * page_bytes);
        ADD_FAILURE() << "a budget of three pages was taken under four pinned tails";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_range);
        EXPECT_NE(error.arguments().find("budget_pages=3, pinned_pages=4"), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(streamer.page_table().budget_pages(), 6u);
    streamer.set_budget(4 * page_bytes);
    EXPECT_EQ(streamer.page_table().budget_pages(), 4u);
}

// With packing, what a set pins (computed from the layouts alone) is what the streamer pins
// once they are added: their tails share pages, and each shape of packed coarse level (the
// 3 x 3 and 2 x 2 levels of a 2^10 RGBA8 texture) takes one page once such a level is asked for.
TEST_P(StreamerTest, PinnedPagesOfASetAreKnownBeforeItIsAdded) {
    auto s = settings(16);
    s.table.region_size = 8_GiB;  // room for twenty 2^12 textures
    std::vector<std::shared_ptr<const TileSource>> sources;
    std::vector<TextureLayout> layouts;
    for (std::uint32_t i = 0; i < 40; ++i) {
        sources.push_back(std::make_shared<test::PatternSource>(i % 2 ? 10 : 12, i));
        layouts.emplace_back(sources.back()->shape());
    }
    const PinnedPages expected = pinned_pages(layouts, s);
    EXPECT_EQ(expected.level_pages, 2u) << "the 3 x 3 and 2 x 2 levels, 2^10's and 2^12's";
    EXPECT_GE(expected.tail_pages, 1u);
    Streamer streamer(*backend_, s);
    for (const auto& source : sources) streamer.add_texture(source);
    EXPECT_EQ(streamer.pinned_pages().tail_pages, expected.tail_pages);
    EXPECT_EQ(streamer.pinned_pages().level_pages, expected.level_pages);
    EXPECT_EQ(streamer.statistics().tail_pages, expected.tail_pages);
    // Every coarse level asked for: the level pool takes at least one page a shape.
    std::vector<PageIndex> levels;
    for (TextureId id = 0; id < streamer.textures().texture_count(); ++id) {
        const TextureLayout layout = streamer.textures().layout(id);
        for (std::uint32_t mip = 0; mip < layout.tail_first_mip; ++mip) {
            if (layout.mips[mip].pages_x == 1 && layout.mips[mip].pages_y == 1) {
                levels.push_back(streamer.textures().base_page(id) + layout.mips[mip].first_page);
            }
        }
    }
    streamer.request(levels);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    EXPECT_GE(streamer.statistics().level_pages, expected.level_pages);
    EXPECT_LE(streamer.statistics().table.pinned_pages, s.table.budget_bytes / page_bytes);
}

// An app without frames, several workers and a slow on_ready: a packed level's ready event is
// delivered before the level can be evicted, so its evicted event never comes first and no other
// level is reported ready in its place while it is there.
TEST_P(StreamerTest, APackedLevelIsReportedReadyBeforeItsPlaceCanBeTaken) {
    constexpr std::size_t textures = 24;  // their 2 x 2 levels take turns in one page of eight
    auto s = settings(16);
    s.packed_level_pages = 1;
    s.worker_threads = test::copy_threads(4);
    s.batch_pages = 1;
    std::mutex mutex;
    std::map<PageIndex, bool> shown;                                  // level -> ready now
    std::map<std::pair<PageIndex, std::uint64_t>, PageIndex> holder;  // place -> level
    std::size_t evicted_unshown = 0, place_taken_twice = 0, readies = 0;
    s.on_ready = [&](std::span<const StreamedPage> pages) {
        std::this_thread::sleep_for(2ms);  // an app that uploads as it is told
        std::lock_guard lock(mutex);
        for (const StreamedPage& page : pages) {
            if (!page.packed() || page.mip != 3) continue;  // levels, not packed tails
            ++readies;
            shown[page.page] = true;
            auto [it, inserted] = holder.try_emplace({page.table_page, page.offset}, page.page);
            if (!inserted && it->second != page.page) ++place_taken_twice;
            it->second = page.page;
        }
    };
    s.on_evicted = [&](std::span<const StreamedPage> pages) {
        std::lock_guard lock(mutex);
        for (const StreamedPage& page : pages) {
            if (!page.packed()) continue;
            if (!shown[page.page]) ++evicted_unshown;
            shown[page.page] = false;
            auto it = holder.find({page.table_page, page.offset});
            if (it != holder.end() && it->second == page.page) holder.erase(it);
        }
    };
    Streamer streamer(*backend_, s);
    std::vector<PageIndex> levels;  // mip 3 (2 x 2 tiles) of 2^10
    for (std::size_t i = 0; i < textures; ++i) {
        const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
        levels.push_back(streamer.textures().base_page(id) +
                         streamer.textures().layout(id).mips[3].first_page);
    }
    for (int round = 0; round < 6; ++round) {
        std::rotate(levels.begin(), levels.begin() + 5, levels.end());
        streamer.request(levels);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    }
    streamer.rethrow_error();
    std::lock_guard lock(mutex);
    EXPECT_GT(readies, 8u) << "levels took turns";
    EXPECT_EQ(evicted_unshown, 0u) << "a level was reported evicted before it was ready";
    EXPECT_EQ(place_taken_twice, 0u) << "two ready levels at one place";
    expect_ready_pages_match(streamer);
}

// While the place evicted for a coarse level waits for the frame in flight, trying to place that
// level again (every time a worker wakes) evicts no other level.
TEST_P(StreamerTest, ALevelWaitingForItsPlaceEvictsNoMoreLevels) {
    auto s = settings(16);
    s.packed_level_pages = 1;
    s.worker_threads = 1;
    s.batch_pages = 4;
    Streamer streamer(*backend_, s);
    std::vector<PageIndex> levels;  // mip 3 (2 x 2 tiles, eight a page) of 2^10
    TextureId first = 0;
    for (std::size_t i = 0; i < 9; ++i) {
        const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
        if (i == 0) first = id;
        levels.push_back(streamer.textures().base_page(id) +
                         streamer.textures().layout(id).mips[3].first_page);
    }
    streamer.request(std::span(levels).first(8));
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    ASSERT_EQ(streamer.statistics().packed_levels, 8u);

    const FrameId frame = streamer.begin_frame();  // the place evicted now waits for it
    streamer.request(std::span(levels).subspan(8));
    // Other pages wake the worker again and again; each time it tries the level once more.
    const PageIndex base = streamer.textures().base_page(first);
    for (PageIndex page = base; page < base + 5; ++page) {
        streamer.request(std::span(&page, 1));
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        while (!streamer.is_ready(page)) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << page;
            std::this_thread::sleep_for(1ms);
        }
    }
    EXPECT_FALSE(streamer.is_ready(levels[8])) << "its place waits for the frame";
    EXPECT_EQ(streamer.statistics().evicted_levels, 1u);
    streamer.complete_frame(frame);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    EXPECT_TRUE(streamer.is_ready(levels[8]));
    EXPECT_EQ(streamer.statistics().evicted_levels, 1u);
    EXPECT_EQ(streamer.statistics().packed_levels, 8u);
    expect_ready_pages_match(streamer);
}

// A lowered budget gives back the pages that hold packed levels beyond its share: their levels
// are evicted (reported, as any eviction), the pages leave the table, and the budget is met.
// Levels asked for again find a place in the pages that remain, or a page of their own.
TEST_P(StreamerTest, ALoweredBudgetGivesBackThePagesOfPackedLevels) {
    constexpr std::size_t textures = 12;
    auto s = settings(32);  // a quarter of it, 8 pages, may hold packed levels
    Streamer streamer(*backend_, s);
    std::vector<PageIndex> coarse;  // mips 2 (3 x 3, two a page) and 3 (2 x 2, eight a page)
    for (std::size_t i = 0; i < textures; ++i) {
        const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(10, i));
        const TextureLayout layout = streamer.textures().layout(id);
        const PageIndex base = streamer.textures().base_page(id);
        coarse.push_back(base + layout.mips[2].first_page);
        coarse.push_back(base + layout.mips[3].first_page);
    }
    streamer.request(coarse);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    StreamerStatistics stats = streamer.statistics();
    ASSERT_EQ(stats.level_pages, 8u) << "six of 3 x 3 levels, two of 2 x 2";
    ASSERT_EQ(stats.packed_levels, 24u);
    streamer.poll_events();

    streamer.set_budget(8 * page_bytes);  // a quarter: 2 pages
    for (int calls = 0; streamer.evict_over_budget(8) > 0; ++calls) ASSERT_LT(calls, 100);
    stats = streamer.statistics();
    EXPECT_EQ(stats.level_pages, 2u);
    EXPECT_EQ(stats.packed_levels + stats.evicted_levels, 24u);
    EXPECT_GT(stats.evicted_levels, 0u);
    EXPECT_EQ(stats.released_level_pages, 6u) << "the six pages beyond the share left the table";
    EXPECT_EQ(stats.table.pinned_pages, stats.tail_pages + 2);
    EXPECT_LE(stats.table.resident_pages + stats.table.deferred_pages, 8u);
    std::size_t evicted = 0;
    for (const StreamerEvent& event : streamer.poll_events()) {
        if (event.kind != StreamerEventKind::evicted || !event.page.packed()) continue;
        ++evicted;
        EXPECT_FALSE(streamer.is_ready(event.page.page));
    }
    EXPECT_EQ(evicted, stats.evicted_levels);
    expect_ready_pages_match(streamer);

    // Asked for again with the budget back: each arrives, packed or in a page of its own.
    streamer.set_budget(32 * page_bytes);
    streamer.request(coarse);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    for (PageIndex page : coarse) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_match(streamer);
    streamer.page_table().check_invariants();
}

// When the pages that may hold coarse levels are all taken by other shapes, a level of a new
// shape is streamed in a page of its own; with pack_levels off, every level is.
TEST_P(StreamerTest, CoarseLevelsWithoutRoomForTheirShapeTakePagesOfTheirOwn) {
    for (const bool pack : {true, false}) {
        auto s = settings(16);
        s.pack_levels = pack;
        s.packed_level_pages = 1;
        Streamer streamer(*backend_, s);
        const TextureId id = streamer.add_texture(std::make_shared<test::PatternSource>(10, 3));
        const TextureLayout layout = streamer.textures().layout(id);
        const PageIndex base = streamer.textures().base_page(id);
        const std::array<PageIndex, 2> levels{base + layout.mips[2].first_page,
                                              base + layout.mips[3].first_page};
        streamer.request(std::span<const PageIndex>(levels));
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
        streamer.rethrow_error();
        for (PageIndex page : levels) ASSERT_TRUE(streamer.is_ready(page)) << page;
        // The coarser level is placed first (coarse first) and takes the one page.
        EXPECT_EQ(streamer.ready_page(levels[1])->packed(), pack);
        EXPECT_FALSE(streamer.ready_page(levels[0])->packed()) << "one page, of the other shape";
        EXPECT_TRUE(streamer.page_table().is_resident(levels[0]));
        const StreamerStatistics stats = streamer.statistics();
        EXPECT_EQ(stats.level_pages, pack ? 1u : 0u);
        EXPECT_EQ(stats.packed_levels, pack ? 1u : 0u);
        expect_ready_pages_match(streamer);
    }
}

// A texture streamed by tile in its finest level: each tile asked for is its own page, placed in
// pages shared with other tiles (32 RGBA8 tiles a page), with its source's bytes; the coarser
// levels are streamed a page at a time as before.
TEST_P(StreamerTest, TilesOfATileLevelAreStreamedOneAPlaceEach) {
    Streamer streamer(*backend_, settings(16));
    const auto pattern = std::make_shared<test::PatternSource>(10, 3);
    const TextureId id = streamer.add_texture(std::make_shared<TileLevelSource>(pattern, 1));
    const TextureLayout layout = streamer.textures().layout(id);
    ASSERT_EQ(layout.tile_levels, 1u);
    ASSERT_EQ(layout.mips[0].pages_x, layout.mips[0].tiles_x) << "a page a tile";
    const PageIndex base = streamer.textures().base_page(id);
    std::vector<PageIndex> tiles;  // every other tile of mip 0 (9 x 9 tiles): 41
    for (std::uint64_t page = 0; page < layout.mips[1].first_page; page += 2) {
        tiles.push_back(base + page);
    }
    const PageIndex coarser = base + layout.mips[1].first_page;  // 5 x 5 tiles: two pages
    std::vector<PageIndex> pages = tiles;
    pages.push_back(coarser);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    // Tiles of one source page filled in one batch share its fill (besides the tail's and the
    // coarser page's fills).
    EXPECT_LE(pattern->fills.load(), tiles.size() / 2);
    std::set<std::pair<PageIndex, std::uint64_t>> places;
    for (PageIndex page : tiles) {
        const auto ready = streamer.ready_page(page);
        ASSERT_TRUE(ready) << page;
        EXPECT_TRUE(ready->packed());
        EXPECT_EQ(ready->bytes, tile_bytes);
        EXPECT_TRUE(places.insert({ready->table_page, ready->offset}).second) << "a place each";
        EXPECT_FALSE(streamer.page_table().is_resident(page)) << "no page of its own";
    }
    ASSERT_TRUE(streamer.is_ready(coarser));
    EXPECT_FALSE(streamer.ready_page(coarser)->packed());
    // A tile not asked for is not resident, though a tile of the same source page is.
    EXPECT_FALSE(streamer.is_ready(base + 1));
    expect_ready_pages_match(streamer);
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.packed_levels, tiles.size());
    EXPECT_EQ(stats.level_pages, (tiles.size() + 31) / 32) << "tiles share their pages";
    EXPECT_EQ(stats.failed_pages, 0u);
    streamer.page_table().check_invariants();
}

// A source that fills on the device (on a GPU: each source page filled once into scratch
// memory, its tiles copied from there) streamed by tile in its two finest levels: every page
// and tile holds the source's bytes.
TEST_P(StreamerTest, TilesOfASourceThatFillsOnTheDeviceHoldItsBytes) {
    Streamer streamer(*backend_, settings(64));
    const TextureId id = streamer.add_texture(std::make_shared<TileLevelSource>(
        std::make_shared<ProceduralSource>(ProceduralSettings{3, 10}), 2));
    const std::vector<PageIndex> pages = all_pages(streamer.textures(), id);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(120s));
    streamer.rethrow_error();
    for (PageIndex page : pages) EXPECT_TRUE(streamer.is_ready(page)) << page;
    expect_ready_pages_match(streamer);
    EXPECT_EQ(streamer.statistics().failed_pages, 0u);
}

// Under a cap of one page of tiles (32 places), a view that moves across 81 tiles gets each
// tile it asks for in turn: the places are evicted by recency under their frame fences, and
// every tile ready holds its own bytes.
TEST_P(StreamerTest, TilesTakeTurnsInTheirPlacesAsTheViewMoves) {
    auto s = settings(16);
    s.packed_level_pages = 1;
    s.recent_frames = 1;
    Streamer streamer(*backend_, s);
    const auto pattern = std::make_shared<test::PatternSource>(10, 5);
    const TextureId id = streamer.add_texture(std::make_shared<TileLevelSource>(pattern, 1));
    const TextureLayout layout = streamer.textures().layout(id);
    const PageIndex base = streamer.textures().base_page(id);
    const std::uint64_t tile_count = layout.mips[1].first_page;  // 81
    FrameId previous = 0;
    for (std::uint64_t first = 0; first < tile_count; first += 9) {  // a row of 9 tiles a view
        std::vector<PageIndex> view(9);
        std::iota(view.begin(), view.end(), base + first);
        for (int repeat = 0; repeat < 40; ++repeat) {
            const FrameId frame = streamer.begin_frame();
            const StreamRequestResult result = streamer.request(view);
            if (previous != 0) streamer.complete_frame(previous);
            previous = frame;
            if (result.ready == view.size()) break;
            std::this_thread::sleep_for(2ms);
        }
        streamer.complete_frame(previous);
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
        streamer.rethrow_error();
        for (PageIndex page : view) EXPECT_TRUE(streamer.is_ready(page)) << page;
        expect_ready_pages_match(streamer);
    }
    const StreamerStatistics stats = streamer.statistics();
    EXPECT_EQ(stats.level_pages, 1u);
    EXPECT_LE(stats.packed_levels, 32u);
    EXPECT_GE(stats.evicted_levels, tile_count - 32) << "81 tiles took turns in 32 places";
    EXPECT_EQ(stats.failed_pages, 0u);
    streamer.page_table().check_invariants();
}

TEST_P(StreamerTest, TileLevelsWithoutPackedLevelsAreRefused) {
    auto s = settings(16);
    s.pack_levels = false;
    Streamer streamer(*backend_, s);
    const auto pattern = std::make_shared<test::PatternSource>(10, 3);
    try {
        streamer.add_texture(std::make_shared<TileLevelSource>(pattern, 1));
        ADD_FAILURE() << "a texture with tile levels was added without packed levels";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
        EXPECT_NE(std::string(error.what()).find("packed levels"), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(streamer.textures().texture_count(), 0u);
    // Without tile levels the same source is taken.
    EXPECT_EQ(streamer.add_texture(pattern), 0u);
}

// A governor lowers and raises the budget and evicts down to it in small steps while two workers
// stream and frames complete one frame late (run under ThreadSanitizer in CI). Every evicted
// event is of a page committed and not evicted since, with its generation; at the end the
// events agree with the table, what is ready is right, and the pool holds the budget's pages.
TEST_P(StreamerTest, EvictingOverBudgetWhileWorkersStreamKeepsEveryEventMatched) {
    // Fewer pages under ThreadSanitizer, where a procedural page takes seconds to fill.
    constexpr std::size_t low = 4, high = test::under_thread_sanitizer ? 12 : 24, seen = high / 2;
    auto s = settings(high);
    s.worker_threads = test::copy_threads(2);
    s.batch_pages = 4;
    s.queue_events = false;
    std::mutex events_mutex;
    std::map<PageIndex, std::uint64_t> live;  // page -> generation, from the events
    std::size_t mismatches = 0, evicted_events = 0;
    s.on_committed = [&](std::span<const StreamedPage> pages) {
        std::lock_guard lock(events_mutex);
        for (const StreamedPage& page : pages) {
            if (!live.emplace(page.page, page.generation).second) ++mismatches;
        }
    };
    s.on_evicted = [&](std::span<const StreamedPage> pages) {
        std::lock_guard lock(events_mutex);
        for (const StreamedPage& page : pages) {
            // A packed level leaves a page of the streamer's own, committed without events
            // (the low budget gives those pages back).
            if (page.packed()) continue;
            auto found = live.find(page.page);
            if (found == live.end() || found->second != page.generation) {
                ++mismatches;
            } else {
                live.erase(found);
            }
            ++evicted_events;
        }
    };
    Streamer streamer(*backend_, s);
    const TextureId id =
        streamer.add_texture(std::make_shared<ProceduralSource>(ProceduralSettings{7, 13}));
    const auto pages = all_pages(streamer.textures(), id);
    ASSERT_GT(pages.size(), 64u);
    // Start full, so that the first low budget has pages to take however slow the fills are.
    streamer.request(std::span(pages).first(high - 1));
    ASSERT_TRUE(streamer.wait_idle_while_progressing(120s));
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> left{0};
    std::thread governor([&] {
        for (int round = 0; !stop; ++round) {
            streamer.set_budget((round % 2 == 0 ? low : high) * page_bytes);
            for (int step = 0; step < 5 && !stop; ++step) {
                left += streamer.evict_over_budget(3);
                try {
                    streamer.page_table().check_invariants();
                } catch (const Error& error) {
                    ADD_FAILURE() << error.what();
                }
                std::this_thread::sleep_for(2ms);
            }
        }
    });
    const auto end = std::chrono::steady_clock::now() + 500ms;
    FrameId previous = 0;
    for (std::size_t f = 0; std::chrono::steady_clock::now() < end; ++f) {
        const FrameId frame = streamer.begin_frame();
        const std::size_t first = (f * 3) % (pages.size() - seen);
        streamer.request(std::span(pages).subspan(first, seen));
        if (previous != 0) streamer.complete_frame(previous);
        previous = frame;
        std::this_thread::sleep_for(1ms);
    }
    stop = true;
    governor.join();
    streamer.complete_frame(previous);
    streamer.set_budget(high * page_bytes);
    streamer.clear_pending();
    ASSERT_TRUE(streamer.wait_idle_while_progressing(120s))
        << streamer.pending_count() << " still pending";
    streamer.rethrow_error();
    PageTable& table = streamer.page_table();
    table.check_invariants();
    auto stats = streamer.statistics();
    EXPECT_GT(stats.table.over_budget_evictions, 0u) << "the governor never evicted";
    EXPECT_GE(left.load(), stats.table.over_budget_evictions);
    EXPECT_EQ(stats.failed_pages, 0u);
    {
        std::lock_guard lock(events_mutex);
        EXPECT_EQ(mismatches, 0u);
        EXPECT_EQ(evicted_events + stats.released_level_pages, stats.table.evictions);
        // The pages that hold packed levels are committed without events.
        EXPECT_EQ(live.size() + stats.level_pages, table.resident_count());
        for (const auto& [page, generation] : live) {
            const auto mapping = table.lookup(page);
            ASSERT_TRUE(mapping) << "page " << page << " has no evicted event but is not resident";
            EXPECT_EQ(mapping->generation, generation) << page;
        }
    }
    expect_ready_pages_match(streamer);
    // Down to the low budget once more, now that nothing is in flight: exactly there, and the
    // pool holds no page beyond it.
    streamer.set_budget(low * page_bytes);
    for (int calls = 0; streamer.evict_over_budget(4) > 0; ++calls) ASSERT_LT(calls, 100);
    stats = streamer.statistics();
    EXPECT_EQ(stats.table.resident_pages + stats.table.deferred_pages, low);
    EXPECT_EQ(stats.table.pool.reserved_bytes, low * page_bytes);
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + low);
    table.check_invariants(baseline_);
}

// With on_fills_enqueued the streamer reports ready at once with the hook's fence value and keeps
// the pages pinned until the fills have finished.
TEST_P(StreamerTest, FillsEnqueuedHookCarriesItsFence) {
    if (GetParam() != "cuda") GTEST_SKIP() << "the hook is for device fills (CUDA backend)";
    if (!device_fills_built()) GTEST_SKIP() << "built without CUDA";
    auto s = settings(64);
    std::atomic<std::uint64_t> calls{0};
    s.on_fills_enqueued = [&](CudaStream stream) -> std::uint64_t {
        EXPECT_NE(stream, nullptr);
        return 1000 + ++calls;
    };
    Streamer streamer(*backend_, s);
    const TextureId id =
        streamer.add_texture(std::make_shared<ProceduralSource>(ProceduralSettings{5, 11}));
    const auto pages = all_pages(streamer.textures(), id);
    streamer.request(pages);
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    EXPECT_GT(calls.load(), 0u);
    for (const StreamerEvent& event : streamer.poll_events()) {
        if (event.kind != StreamerEventKind::ready) continue;
        if (event.page.page == streamer.textures().tail_page(id) || event.page.packed()) {
            // add_texture waits for the tail; packed levels are filled before they are reported.
            EXPECT_EQ(event.page.fence, 0u);
        } else {
            EXPECT_GT(event.page.fence, 1000u);
            EXPECT_LE(event.page.fence, 1000u + calls.load());
        }
    }
    backend_->synchronize();
    expect_ready_pages_match(streamer);
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamerTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage::vt
