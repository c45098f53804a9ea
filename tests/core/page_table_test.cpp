#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "../support/eventually.hpp"
#include "../support/expect_error.hpp"
#include "../support/gated_backend.hpp"
#include "../support/leak_guard.hpp"
#include "vtpage/backend/fault_injecting_backend.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage {
namespace {

constexpr std::size_t page = 2_MiB;

std::vector<PageIndex> range(PageIndex first, PageIndex count) {
    std::vector<PageIndex> pages(count);
    std::iota(pages.begin(), pages.end(), first);
    return pages;
}

template <typename... Pages>
std::vector<PageIndex> pages_of(Pages... pages) {
    return {PageIndex(pages)...};
}

PageTableSettings small_table(std::size_t budget_pages, const char* policy = "lru") {
    PageTableSettings settings;
    settings.region_size = 1_GiB;
    settings.budget_bytes = budget_pages * page;
    std::string name = policy;
    settings.make_policy = [name] { return make_eviction_policy(name); };
    settings.log = Log(silent_log());
    return settings;
}

// Records the callbacks' story: which page holds which physical slot.
struct Observer {
    void attach(PageTableSettings& settings) {
        settings.on_committed = [this](std::span<const PageMapping> mappings) {
            for (const auto& m : mappings) {
                EXPECT_EQ(slot_of.count(m.page), 0u) << "committed twice: " << m.page;
                slot_of[m.page] = m.physical.slot;
                order.push_back("+" + std::to_string(m.page));
            }
        };
        settings.on_evicted = [this](std::span<const PageMapping> mappings) {
            for (const auto& m : mappings) {
                EXPECT_EQ(slot_of.count(m.page), 1u) << "evicted but not committed: " << m.page;
                slot_of.erase(m.page);
                order.push_back("-" + std::to_string(m.page));
            }
        };
    }
    std::map<PageIndex, std::uint32_t> slot_of;
    std::vector<std::string> order;
};

// Every table gives back every mapping, page, reservation and descriptor it took.
class PageTableTest : public test::LeakCheckedBackendTest {};

TEST_P(PageTableTest, RequestQueuesAndCommitQueuedCommitsInOrder) {
    Backend& backend = *backend_;
    Observer observer;
    auto settings = small_table(8);
    observer.attach(settings);
    PageTable table(backend, settings);
    auto result = table.request(pages_of(5, 3, 9, 3));
    EXPECT_EQ(result.queued, 3u);
    EXPECT_EQ(result.already_queued, 1u);
    EXPECT_EQ(table.queued_count(), 3u);
    auto committed = table.commit_queued(2);
    ASSERT_EQ(committed.size(), 2u);
    EXPECT_EQ(committed[0].page, 5u);
    EXPECT_EQ(committed[1].page, 3u);
    EXPECT_TRUE(table.is_resident(5));
    EXPECT_FALSE(table.is_resident(9));
    EXPECT_EQ(table.queued_count(), 1u);
    result = table.request(pages_of(5, 9));
    EXPECT_EQ(result.resident, 1u);
    EXPECT_EQ(result.already_queued, 1u);
    table.commit_queued(10);
    EXPECT_EQ(table.resident_count(), 3u);
    EXPECT_EQ(observer.slot_of.size(), 3u);
    // The pages are really mapped: write through one and read it back.
    std::uint64_t value = 42, back = 0;
    backend.write(table.address_of(9), &value, 8);
    backend.read(&back, table.address_of(9), 8);
    EXPECT_EQ(back, 42u);
    table.check_invariants();
}

TEST_P(PageTableTest, LruEvictsTheLeastRecentlyUsed) {
    Backend& backend = *backend_;
    Observer observer;
    auto settings = small_table(3, "lru");
    observer.attach(settings);
    PageTable table(backend, settings);
    table.commit(pages_of(1, 2, 3));
    table.request(pages_of(1));  // 2 is now the least recently used
    table.commit(pages_of(4));
    EXPECT_FALSE(table.is_resident(2));
    table.request(pages_of(3));
    table.commit(pages_of(5));  // 1 is older than 3 and 4
    EXPECT_FALSE(table.is_resident(1));
    EXPECT_TRUE(table.is_resident(3));
    EXPECT_EQ(observer.order, (std::vector<std::string>{"+1", "+2", "+3", "-2", "+4", "-1", "+5"}));
    table.check_invariants();
}

TEST_P(PageTableTest, ClockGivesReferencedPagesASecondChance) {
    Backend& backend = *backend_;
    auto settings = small_table(3, "clock");
    PageTable table(backend, settings);
    table.commit(pages_of(1, 2, 3));
    table.request(pages_of(1, 3));  // 1 and 3 referenced, 2 not
    table.commit(pages_of(4));
    EXPECT_FALSE(table.is_resident(2));
    EXPECT_TRUE(table.is_resident(1));
    EXPECT_TRUE(table.is_resident(3));
    // Second sweep: the hand cleared 1's and 3's bits, so now the oldest unreferenced goes.
    table.commit(pages_of(5));
    EXPECT_EQ(table.resident_count(), 3u);
    EXPECT_TRUE(table.is_resident(4) || table.is_resident(5));
    table.check_invariants();
}

TEST_P(PageTableTest, PinnedPagesAreNeverEvicted) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(3));
    table.commit(pages_of(1, 2), /*pin=*/true);
    table.commit(pages_of(3));
    for (PageIndex next = 10; next < 20; ++next) table.commit(pages_of(next));
    EXPECT_TRUE(table.is_resident(1));
    EXPECT_TRUE(table.is_resident(2));
    EXPECT_EQ(table.statistics().pinned_pages, 2u);
    table.pin(pages_of(19));
    // Budget full of pinned pages: a commit cannot fit, and says why.
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(30)); }), Errc::budget_exhausted);
    EXPECT_FALSE(table.is_resident(30));
    // commit_queued leaves such pages queued instead.
    table.request(pages_of(31));
    EXPECT_TRUE(table.commit_queued(4).empty());
    EXPECT_EQ(table.queued_count(), 1u);
    table.unpin(pages_of(1, 2, 19));
    EXPECT_EQ(table.commit_queued(4).size(), 1u);
    EXPECT_EQ(test::error_code_of([&] { table.unpin(pages_of(1)); }), Errc::invalid_argument);
    table.check_invariants();
}

TEST_P(PageTableTest, FramesFenceEviction) {
    Backend& backend = *backend_;
    // Only the fences of requested pages here; deferred reuse has its own tests.
    auto settings = small_table(2);
    settings.defer_reuse = false;
    PageTable table(backend, settings);
    FrameId frame1 = table.begin_frame();
    table.commit(pages_of(1, 2));  // used in frame 1
    FrameId frame2 = table.begin_frame();
    table.request(pages_of(3));
    // Frame 1 is not complete: its pages cannot go, so page 3 waits.
    EXPECT_TRUE(table.commit_queued(1).empty());
    EXPECT_EQ(test::error_code_of([&] { table.evict(pages_of(1)); }), Errc::busy);
    table.complete_frame(frame1);
    EXPECT_EQ(table.commit_queued(1).size(), 1u);
    EXPECT_TRUE(table.is_resident(3));
    // Page 3 was committed in frame 2: page 2 (frame 1, complete) makes room for page 4.
    table.request(pages_of(3, 4));
    EXPECT_EQ(table.commit_queued(1).size(), 1u);
    EXPECT_TRUE(table.is_resident(3));
    EXPECT_FALSE(table.is_resident(2));
    // Pages 3 and 4 are both fenced by frame 2 now.
    table.request(pages_of(5));
    EXPECT_TRUE(table.commit_queued(1).empty());
    table.complete_frame(frame2);
    EXPECT_EQ(table.commit_queued(1).size(), 1u);
    EXPECT_EQ(test::error_code_of([&] { table.complete_frame(frame2 + 5); }),
              Errc::invalid_argument);
    table.check_invariants();
}

// A commit for pages asked for in frame N takes the room of pages wanted before N only. When
// what could go was wanted in N or later it is superseded and nothing changes; pages fenced by
// frames in flight make it wait instead. wanted_in 0 keeps plain LRU.
TEST_P(PageTableTest, ACommitTakesNoRoomFromPagesWantedSinceItWasAskedFor) {
    auto settings = small_table(2);
    settings.defer_reuse = false;
    PageTable table(*backend_, settings);
    const FrameId frame1 = table.begin_frame();
    table.commit(pages_of(1, 2), CommitOptions{.wanted_in = frame1});
    const FrameId frame2 = table.begin_frame();
    EXPECT_EQ(
        test::error_code_of([&] { table.commit(pages_of(3), CommitOptions{.wanted_in = frame2}); }),
        Errc::budget_exhausted)
        << "wanted before frame 2, but frame 1 may still sample them: wait";
    table.complete_frame(frame1);
    table.request(pages_of(1, 2));  // the view samples both in frame 2
    EXPECT_EQ(
        test::error_code_of([&] { table.commit(pages_of(3), CommitOptions{.wanted_in = frame2}); }),
        Errc::superseded)
        << "wanted in frame 2: waiting for it would not help";
    table.complete_frame(frame2);
    EXPECT_EQ(
        test::error_code_of([&] { table.commit(pages_of(3), CommitOptions{.wanted_in = frame2}); }),
        Errc::superseded)
        << "both were wanted in frame 2, when page 3 was asked for";
    EXPECT_TRUE(table.is_resident(1) && table.is_resident(2));
    EXPECT_FALSE(table.is_resident(3));
    const FrameId frame3 = table.begin_frame();
    table.request(pages_of(2));  // frame 3 no longer wants page 1
    table.complete_frame(frame3);
    ASSERT_EQ(table.commit(pages_of(3), CommitOptions{.wanted_in = frame3}).size(), 1u);
    EXPECT_FALSE(table.is_resident(1));
    EXPECT_TRUE(table.is_resident(2));
    // Committed for frame 3's request, page 3 is as recent as frame 3 (not as the frame
    // current when it was committed), and without the rule LRU evicts as before.
    const FrameId frame4 = table.begin_frame();
    table.request(pages_of(2));
    table.complete_frame(frame4);
    EXPECT_EQ(
        test::error_code_of([&] { table.commit(pages_of(4), CommitOptions{.wanted_in = frame3}); }),
        Errc::superseded);
    ASSERT_EQ(table.commit(pages_of(4), CommitOptions{.wanted_in = frame4}).size(), 1u);
    EXPECT_FALSE(table.is_resident(3));
    ASSERT_EQ(table.commit(pages_of(5)).size(), 1u);
    EXPECT_FALSE(table.is_resident(2)) << "plain LRU: page 2 was used longest ago";
    table.check_invariants();
}

// With recent_frames, pages wanted in the frames before the request's are kept too; pages of a
// lower precedence are not, whenever they were wanted: a coarser level takes a finer one's room.
TEST_P(PageTableTest, RecentFramesKeepPagesAndPrecedenceMayTakeTheirRoom) {
    auto settings = small_table(2);
    settings.defer_reuse = false;
    PageTable table(*backend_, settings);
    const FrameId frame1 = table.begin_frame();
    const std::uint32_t fine[] = {0, 0};
    table.commit(pages_of(1, 2), CommitOptions{.wanted_in = frame1, .precedence = fine});
    table.complete_frame(frame1);
    const FrameId frame2 = table.begin_frame();
    table.request(pages_of(2));
    table.complete_frame(frame2);
    const FrameId frame3 = table.begin_frame();
    table.complete_frame(frame3);
    // Page 1 was wanted in frame 1, page 2 in frame 2: with a window of 3 frames both are kept.
    EXPECT_EQ(test::error_code_of([&] {
                  table.commit(pages_of(3), CommitOptions{.wanted_in = frame3, .recent_frames = 3});
              }),
              Errc::superseded);
    // With a window of 2, page 1 (frame 1) may go; page 2 stays.
    ASSERT_EQ(
        table.commit(pages_of(3), CommitOptions{.wanted_in = frame3, .recent_frames = 2}).size(),
        1u);
    EXPECT_FALSE(table.is_resident(1));
    EXPECT_TRUE(table.is_resident(2));
    // Page 4 of precedence 1 takes the room of page 2 (precedence 0), wanted or not; page 3
    // (committed without a precedence: 0) goes first only if it is older, so say both wanted.
    table.request(pages_of(2, 3));
    const std::uint32_t coarse[] = {1};
    EXPECT_EQ(test::error_code_of([&] {
                  table.commit(pages_of(4), CommitOptions{.wanted_in = frame3, .recent_frames = 8});
              }),
              Errc::superseded)
        << "precedence 0 takes no room of recent pages";
    ASSERT_EQ(
        table
            .commit(pages_of(4),
                    CommitOptions{.wanted_in = frame3, .recent_frames = 8, .precedence = coarse})
            .size(),
        1u);
    EXPECT_TRUE(table.is_resident(4));
    EXPECT_EQ(int(table.is_resident(2)) + int(table.is_resident(3)), 1);
    const std::uint32_t two[] = {1, 1};
    EXPECT_EQ(test::error_code_of([&] {
                  table.commit(pages_of(5), CommitOptions{.wanted_in = frame3, .precedence = two});
              }),
              Errc::invalid_argument)
        << "one precedence a page";
    table.check_invariants();
}

TEST_P(PageTableTest, EvictedPagesAreReusedOnlyOnceTheirFramesComplete) {
    Backend& backend = *backend_;
    auto settings = small_table(2);
    Observer observer;
    observer.attach(settings);
    PageTable table(backend, settings);
    FrameId frame1 = table.begin_frame();
    table.commit(pages_of(1, 2));
    table.complete_frame(frame1);
    // Frame 2 is in flight and may sample pages 1 and 2 without having asked for them.
    FrameId frame2 = table.begin_frame();
    const std::uint32_t slot1 = observer.slot_of.at(1);
    table.request(pages_of(3));
    // Page 1 goes from the table at once, but its physical page is held back for frame 2.
    EXPECT_TRUE(table.commit_queued(1).empty());
    EXPECT_FALSE(table.is_resident(1));
    auto stats = table.statistics();
    EXPECT_EQ(stats.deferred_pages, 1u);
    EXPECT_EQ(stats.evictions, 1u);
    EXPECT_LE(stats.resident_pages + stats.deferred_pages, stats.budget_pages);
    // Asking again takes no second victim: the held-back page is room to come.
    EXPECT_TRUE(table.commit_queued(1).empty());
    EXPECT_TRUE(table.is_resident(2));
    EXPECT_EQ(table.statistics().deferred_pages, 1u);
    table.check_invariants();
    // A frame begun after the eviction cannot see page 1; only frame 2 held it back.
    FrameId frame3 = table.begin_frame();
    table.complete_frame(frame2);
    auto committed = table.commit_queued(1);
    ASSERT_EQ(committed.size(), 1u);
    EXPECT_EQ(committed.front().page, 3u);
    EXPECT_EQ(committed.front().physical.slot, slot1);
    stats = table.statistics();
    EXPECT_EQ(stats.deferred_pages, 0u);
    EXPECT_EQ(stats.deferred_peak, 1u);
    EXPECT_EQ(stats.deferred_total, 1u);
    EXPECT_EQ(stats.deferred_reused, 1u);
    table.complete_frame(frame3);
    table.check_invariants();
}

// Victims being unmapped, and unmapped pages on their way to being held back or to the pool,
// still hold physical memory: another thread's commit meanwhile finds no room in them (it
// would take fresh pages beyond the budget), and counts them as room to come (it takes no
// victims of its own for them).
TEST_P(PageTableTest, PagesOnTheirWayOutStillCountAgainstTheBudget) {
    test::GatedBackend gated(*backend_);
    PageTable table(gated, small_table(2));
    const FrameId frame1 = table.begin_frame();
    table.commit(pages_of(1, 2));
    table.complete_frame(frame1);
    const FrameId frame2 = table.begin_frame();  // may sample pages 1 and 2
    const std::size_t pages_held = backend_->live_resources().pages;
    gated.close();
    // Evicts pages 1 and 2 (held back for frame 2) and waits in their unmap.
    auto evicting = std::async(std::launch::async, [&] {
        return test::error_code_of([&] { table.commit(pages_of(3, 4)); });
    });
    ASSERT_TRUE(gated.wait_until_held());
    auto second = std::async(std::launch::async, [&] {
        return test::error_code_of([&] { table.commit(pages_of(5)); });
    });
    const bool answered = test::eventually(
        [&] {
            return second.wait_for(std::chrono::seconds(0)) == std::future_status::ready ||
                   backend_->live_resources().pages > pages_held;
        },
        std::chrono::seconds(5));
    EXPECT_TRUE(answered);
    EXPECT_EQ(backend_->live_resources().pages, pages_held)
        << "a commit took fresh pages while the budget's pages were being evicted";
    gated.open();
    EXPECT_EQ(second.get(), Errc::budget_exhausted) << "room is coming, not there";
    EXPECT_EQ(evicting.get(), Errc::budget_exhausted);
    EXPECT_FALSE(table.is_resident(5));
    auto stats = table.statistics();
    EXPECT_EQ(stats.evictions, 2u) << "no victim beyond the first commit's";
    EXPECT_EQ(stats.deferred_pages, 2u);
    table.complete_frame(frame2);
    EXPECT_EQ(table.commit(pages_of(5)).size(), 1u);
    EXPECT_LE(backend_->live_resources().pages, pages_held);
    table.check_invariants();

    // The same with no frame in flight: the pages go straight back to the pool.
    ASSERT_EQ(table.commit(pages_of(6)).size(), 1u);  // the budget is full again
    table.request(pages_of(7));
    gated.close();
    auto evict = std::async(std::launch::async, [&] { table.evict(pages_of(5)); });
    ASSERT_TRUE(gated.wait_until_held());
    auto queued = std::async(std::launch::async, [&] { return table.commit_queued(1).size(); });
    EXPECT_TRUE(test::eventually(
        [&] {
            return queued.wait_for(std::chrono::seconds(0)) == std::future_status::ready ||
                   backend_->live_resources().pages > pages_held;
        },
        std::chrono::seconds(5)));
    EXPECT_LE(backend_->live_resources().pages, pages_held);
    gated.open();
    evict.get();
    EXPECT_EQ(queued.get(), 0u) << "the evicted page is on its way to the pool";
    EXPECT_EQ(table.commit_queued(1).size(), 1u);
    EXPECT_TRUE(table.is_resident(6) && table.is_resident(7));
    EXPECT_EQ(table.statistics().evictions, 3u);
    EXPECT_LE(backend_->live_resources().pages, pages_held);
    table.check_invariants();
}

TEST_P(PageTableTest, CommitWithFramesInFlightEvictsAheadAndSucceedsLater) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(2));
    FrameId frame1 = table.begin_frame();
    table.commit(pages_of(1, 2));
    table.complete_frame(frame1);
    FrameId frame2 = table.begin_frame();
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(3, 4)); }), Errc::budget_exhausted);
    // The victims are gone from the table and held back; the pages did not commit.
    EXPECT_EQ(table.resident_count(), 0u);
    EXPECT_FALSE(table.is_resident(3));
    EXPECT_EQ(table.statistics().deferred_pages, 2u);
    // Retrying while the frame is in flight evicts nothing more and still waits.
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(3, 4)); }), Errc::budget_exhausted);
    EXPECT_EQ(table.statistics().evictions, 2u);
    table.complete_frame(frame2);
    EXPECT_EQ(table.commit(pages_of(3, 4)).size(), 2u);
    EXPECT_EQ(table.statistics().deferred_pages, 0u);
    EXPECT_EQ(table.statistics().pool.used_bytes, 2 * page);
    table.check_invariants();
}

// A small budget evicts at most an eighth of itself ahead, whatever the setting: at 8 pages a
// commit of two evicts one more, not 64 (which would empty the budget of what the view has).
// And a page wanted since the commit's window is never evicted ahead.
TEST_P(PageTableTest, EvictingAheadTakesAtMostAnEighthOfTheBudgetAndNoRecentPage) {
    PageTableSettings settings = small_table(8);
    settings.evict_ahead_pages = 64;
    PageTable table(*backend_, settings);
    FrameId frame = table.begin_frame();
    table.commit(range(1, 8));
    table.complete_frame(frame);
    frame = table.begin_frame();
    EXPECT_EQ(test::error_code_of([&] { table.commit(range(20, 2)); }), Errc::budget_exhausted);
    EXPECT_EQ(table.statistics().evictions, 3u);
    table.complete_frame(frame);

    // Pages 4 .. 8 wanted in the last 4 frames: a commit asked for now with a 4-frame window
    // takes its victim and the one it evicts ahead from pages 1 .. 3 only.
    PageTable kept(*backend_, settings);
    frame = kept.begin_frame();
    kept.commit(range(1, 8));
    for (int i = 0; i < 4; ++i) {
        kept.complete_frame(frame);
        frame = kept.begin_frame();
        kept.request(range(4 + PageIndex(i), 1));
    }
    kept.request(range(4, 5));
    EXPECT_EQ(test::error_code_of([&] {
                  kept.commit(range(20, 1), CommitOptions{.wanted_in = frame, .recent_frames = 4});
              }),
              Errc::budget_exhausted);
    for (PageIndex page = 4; page <= 8; ++page) EXPECT_TRUE(kept.is_resident(page)) << page;
    EXPECT_EQ(kept.statistics().evictions, 2u);
    kept.complete_frame(frame);
    kept.check_invariants();
}

TEST_P(PageTableTest, EvictingAheadKeepsPagesRipeningForTheNextCommits) {
    Backend& backend = *backend_;
    PageTableSettings settings = small_table(32);  // an eighth of it: the 4 asked for
    settings.evict_ahead_pages = 4;
    PageTable table(backend, settings);
    FrameId frame = table.begin_frame();
    table.commit(range(1, 32));
    table.complete_frame(frame);
    frame = table.begin_frame();
    // The budget is full and a frame is in flight: the commit waits, and evicts its two
    // victims and four more, which ripen together.
    EXPECT_EQ(test::error_code_of([&] { table.commit(range(100, 2)); }), Errc::budget_exhausted);
    EXPECT_EQ(table.statistics().evictions, 6u);
    EXPECT_EQ(table.statistics().deferred_pages, 6u);
    table.complete_frame(frame);
    frame = table.begin_frame();
    // Three commits of two pages find ripe pages without waiting for another frame; each
    // tops the pages ripening back up to four beyond its own.
    for (PageIndex first : {130, 140, 150}) {
        EXPECT_EQ(table.commit(range(first, 2)).size(), 2u) << "pages " << first;
        const auto stats = table.statistics();
        EXPECT_LE(stats.resident_pages + stats.deferred_pages, stats.budget_pages);
        table.check_invariants();
    }
    EXPECT_GT(table.statistics().evictions, 6u) << "the pages ripening were topped up";
    table.complete_frame(frame);
}

TEST_P(PageTableTest, WithoutEvictingAheadACommitAtAFullBudgetWaitsEveryFrame) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(8));
    FrameId frame = table.begin_frame();
    table.commit(range(1, 8));
    table.complete_frame(frame);
    frame = table.begin_frame();
    EXPECT_EQ(test::error_code_of([&] { table.commit(range(20, 2)); }), Errc::budget_exhausted);
    EXPECT_EQ(table.statistics().evictions, 2u);
    table.complete_frame(frame);
    frame = table.begin_frame();
    EXPECT_EQ(table.commit(range(30, 2)).size(), 2u);  // the two ripe pages
    EXPECT_EQ(test::error_code_of([&] { table.commit(range(40, 2)); }), Errc::budget_exhausted);
    table.complete_frame(frame);
}

TEST_P(PageTableTest, HeldBackPagesAreBoundedByTheFramesInFlight) {
    Backend& backend = *backend_;
    // Three frames in flight at a time, each evicting up to a batch: what is held back never
    // exceeds the evictions of the frames in flight, and never the budget.
    constexpr std::size_t budget = 16, batch = 4, in_flight = 3;
    PageTable table(backend, small_table(budget));
    std::deque<FrameId> frames;
    PageIndex next = 1;
    std::size_t max_held = 0;
    for (int i = 0; i < 60; ++i) {
        frames.push_back(table.begin_frame());
        table.request(range(next, batch));
        next += batch;
        table.commit_queued(batch);
        const auto stats = table.statistics();
        EXPECT_LE(stats.resident_pages + stats.deferred_pages, budget);
        max_held = std::max(max_held, stats.deferred_pages);
        if (frames.size() == in_flight) {
            table.complete_frame(frames.front());
            frames.pop_front();
        }
        table.check_invariants();
    }
    EXPECT_GT(max_held, 0u);
    EXPECT_LE(max_held, batch * in_flight);
    EXPECT_EQ(table.statistics().deferred_peak, max_held);
    while (!frames.empty()) {
        table.complete_frame(frames.front());
        frames.pop_front();
    }
}

TEST_P(PageTableTest, ExplicitEvictionDefersReuseWhileFramesAreInFlight) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(2));
    FrameId frame1 = table.begin_frame();
    table.commit(pages_of(1, 2));
    table.complete_frame(frame1);
    FrameId frame2 = table.begin_frame();
    table.evict(pages_of(1));
    EXPECT_EQ(table.statistics().deferred_pages, 1u);
    table.check_invariants();
    table.complete_frame(frame2);
    table.commit(pages_of(3));
    EXPECT_EQ(table.statistics().deferred_pages, 0u);
    table.check_invariants();
}

TEST_P(PageTableTest, ExplicitEvictionChecksEveryPageFirst) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(4));
    table.commit(pages_of(1, 2, 3));
    table.pin(pages_of(3));
    EXPECT_EQ(test::error_code_of([&] { table.evict(pages_of(1, 3)); }), Errc::busy);
    EXPECT_TRUE(table.is_resident(1));  // nothing changed
    EXPECT_EQ(test::error_code_of([&] { table.evict(pages_of(1, 7)); }), Errc::not_mapped);
    EXPECT_TRUE(table.is_resident(1));
    table.evict(pages_of(1, 2));
    EXPECT_EQ(test::error_code_of([&] { table.evict(pages_of(1)); }), Errc::not_mapped);  // double
    EXPECT_EQ(table.statistics().evictions, 2u);
    table.unpin(pages_of(3));
    table.check_invariants();
}

TEST_P(PageTableTest, BadInputIsTyped) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(4));
    const PageIndex past_end = table.page_count();
    EXPECT_EQ(test::error_code_of([&] { table.request(pages_of(past_end)); }), Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(past_end)); }), Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] { table.address_of(past_end); }), Errc::out_of_range);
    EXPECT_EQ(test::error_code_of([&] { table.pin(pages_of(1)); }), Errc::not_mapped);
    EXPECT_EQ(test::error_code_of([&] { table.protect(pages_of(1), Access::read); }),
              Errc::not_mapped);
    EXPECT_EQ(table.queued_count(), 0u);  // the bad request queued nothing
    table.commit(pages_of(1));
    table.protect(pages_of(1), Access::read);
    std::uint32_t word = 1;
    EXPECT_EQ(test::error_code_of([&] { backend.write(table.address_of(1), &word, 4); }),
              Errc::access_denied);
    table.check_invariants();
}

TEST_P(PageTableTest, ShutdownWithPinnedPagesIsRefused) {
    Backend& backend = *backend_;
    const auto baseline = backend.live_resources();
    (void)baseline;
    {
        PageTable table(backend, small_table(4));
        table.commit(pages_of(1, 2), true);
        EXPECT_EQ(test::error_code_of([&] { table.shutdown(); }), Errc::busy);
        EXPECT_TRUE(table.is_resident(1));
        table.unpin(pages_of(1, 2));
        FrameId frame = table.begin_frame();
        table.request(pages_of(1));
        EXPECT_EQ(test::error_code_of([&] { table.shutdown(); }), Errc::busy);  // frame in flight
        table.complete_frame(frame);
        table.shutdown();
        EXPECT_EQ(table.resident_count(), 0u);
    }
    EXPECT_EQ(backend.live_resources(), baseline);
}

TEST_P(PageTableTest, DestructorCleansUpEvenWithPinnedPages) {
    Backend& backend = *backend_;
    const auto baseline = backend.live_resources();
    (void)baseline;
    {
        PageTable table(backend, small_table(4));
        table.commit(pages_of(1, 2), true);
        table.begin_frame();
        table.request(pages_of(1));
    }
    EXPECT_EQ(backend.live_resources(), baseline);
}

TEST_P(PageTableTest, ShutdownWaitsForFramesThatMayReadHeldBackPages) {
    PageTable table(*backend_, small_table(4));
    table.commit(pages_of(1, 2));
    const FrameId frame = table.begin_frame();  // may sample pages 1 and 2, asked for or not
    table.evict(pages_of(1));
    ASSERT_EQ(table.statistics().deferred_pages, 1u);
    try {
        table.shutdown();
        ADD_FAILURE() << "shutdown returned while frame " << frame
                      << " may still read the page held back for it";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::busy) << error.what();
        const std::string what = error.what();
        EXPECT_NE(what.find("1 evicted pages are held back for frame 1"), std::string::npos)
            << what;
    }
    // Nothing changed: the page is still held back, page 2 still resident.
    EXPECT_EQ(table.statistics().deferred_pages, 1u);
    EXPECT_TRUE(table.is_resident(2));
    table.check_invariants(baseline_);
    table.complete_frame(frame);
    table.shutdown();
    EXPECT_EQ(table.statistics().deferred_pages, 0u);
    EXPECT_EQ(table.resident_count(), 0u);
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages);
}

TEST_P(PageTableTest, DestructorReleasesPagesHeldBackForFramesInFlight) {
    {
        PageTable table(*backend_, small_table(4));
        table.commit(pages_of(1, 2));
        table.begin_frame();
        table.evict(pages_of(1));
        ASSERT_EQ(table.statistics().deferred_pages, 1u);
    }
    EXPECT_EQ(backend_->live_resources(), baseline_);
}

TEST(PageTableHost, OutOfMemoryEvictsAndRetriesThenFailsTyped) {
    // The device holds 4 pages but the budget says 8: commits past 4 must evict.
    HostBackend backend(HostBackendSettings{2_MiB, 4 * 2_MiB});
    auto settings = small_table(8);
    PageTable table(backend, settings);
    table.commit(pages_of(1, 2, 3, 4));
    table.commit(pages_of(5, 6));
    EXPECT_EQ(table.resident_count(), 4u);
    EXPECT_TRUE(table.is_resident(5));
    EXPECT_GE(table.statistics().out_of_memory_retries, 1u);
    table.check_invariants();
    // Nothing evictable: the error is out_of_memory and the table is as it was.
    table.pin(pages_of(3, 4, 5, 6));
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(7)); }), Errc::out_of_memory);
    EXPECT_FALSE(table.is_resident(7));
    EXPECT_EQ(table.resident_count(), 4u);
    table.check_invariants();
    table.unpin(pages_of(3, 4, 5, 6));
}

TEST_P(PageTableTest, AFrameBegunDuringAnOutOfMemoryRetrySeesNoPageThatIsRefilled) {
    FaultInjectingBackend faulty(*backend_);
    auto settings = small_table(8);
    // The app's view, from the callbacks: which page holds which physical page.
    std::mutex view_mutex;
    std::map<PageIndex, std::uint32_t> view;
    settings.on_committed = [&](std::span<const PageMapping> mappings) {
        std::lock_guard lock(view_mutex);
        for (const auto& m : mappings) view[m.page] = m.physical.slot;
    };
    settings.on_evicted = [&](std::span<const PageMapping> mappings) {
        std::lock_guard lock(view_mutex);
        for (const auto& m : mappings) view.erase(m.page);
    };
    // When the retry has taken its victims (it logs then), a frame begins on another thread and
    // notes what it may sample. The retry waits a while for it, unless something holds it back.
    PageTable* table_at = nullptr;
    std::thread framer;
    std::promise<void> begun;
    FrameId frame = 0;
    std::map<PageIndex, std::uint32_t> frame_view;
    settings.log = Log([&](LogLevel, std::string_view message) {
        if (message.find("out of memory") == std::string_view::npos || framer.joinable()) return;
        framer = std::thread([&] {
            frame = table_at->begin_frame();
            {
                std::lock_guard lock(view_mutex);
                frame_view = view;
            }
            begun.set_value();
        });
        begun.get_future().wait_for(std::chrono::milliseconds(500));
    });
    PageTable table(faulty, settings);
    table_at = &table;
    table.commit(range(1, 4));  // no frame in flight: the budget has room for 4 more
    // The device is full below the budget: the commit evicts a page and takes its memory.
    faulty.add_rule({BackendOperation::create, Errc::out_of_memory, 0, 1.0});
    const auto committed = table.commit(pages_of(5));
    ASSERT_TRUE(framer.joinable()) << "no out-of-memory retry";
    framer.join();
    ASSERT_EQ(committed.size(), 1u);
    EXPECT_GE(table.statistics().out_of_memory_retries, 1u);
    // The frame is not complete: no page it could see may be refilled with another page.
    std::vector<std::string> refilled;
    for (const auto& [seen, slot] : frame_view) {
        for (const auto& [now, now_slot] : view) {
            if (now != seen && now_slot == slot) {
                refilled.push_back(
                    detail::concat("page ", seen, " (slot ", slot, ") now holds page ", now));
            }
        }
    }
    EXPECT_TRUE(refilled.empty()) << "frame " << frame << " began during the retry and may sample "
                                  << refilled.front();
    table.complete_frame(frame);
    faulty.clear_rules();
    table.check_invariants();
}

TEST_P(PageTableTest, FailedBatchRollsBackAndKeepsPagesQueued) {
    FaultInjectingBackend faulty(*backend_);
    PageTable table(faulty, small_table(8));
    table.request(range(10, 4));
    faulty.add_rule({BackendOperation::map, Errc::backend_failure, 3});
    EXPECT_EQ(test::error_code_of([&] { table.commit_queued(4); }), Errc::backend_failure);
    EXPECT_EQ(table.resident_count(), 0u);
    EXPECT_EQ(table.queued_count(), 4u);
    EXPECT_EQ(backend_->live_resources().mappings, 0u);
    table.check_invariants();
    faulty.clear_rules();
    auto committed = table.commit_queued(4);
    ASSERT_EQ(committed.size(), 4u);
    EXPECT_EQ(committed[0].page, 10u);  // the order survived the failure
    EXPECT_EQ(table.statistics().failed_batches, 1u);
    table.check_invariants();
}

TEST_P(PageTableTest, FailedEvictionKeepsTheVictimResident) {
    FaultInjectingBackend faulty(*backend_);
    PageTable table(faulty, small_table(2));
    table.commit(pages_of(1, 2));
    faulty.add_rule({BackendOperation::unmap, Errc::backend_failure, 1});
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(3)); }), Errc::backend_failure);
    EXPECT_TRUE(table.is_resident(1));
    EXPECT_TRUE(table.is_resident(2));
    EXPECT_FALSE(table.is_resident(3));
    table.check_invariants();
    table.commit(pages_of(3));
    EXPECT_TRUE(table.is_resident(3));
    table.check_invariants();
}

TEST_P(PageTableTest, AFailedCommitLeavesNoPinBehind) {
    FaultInjectingBackend faulty(*backend_);
    PageTable table(faulty, small_table(4));
    table.commit(pages_of(1, 2));
    faulty.add_rule({BackendOperation::map, Errc::backend_failure, 3});  // counts from 1 on
    // 1 and 2 are resident and would be pinned with 3; 3's map fails, so nothing is pinned.
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(1, 2, 3), /*pin=*/true); }),
              Errc::backend_failure);
    EXPECT_EQ(table.statistics().pinned_pages, 0u);
    EXPECT_EQ(test::error_code_of([&] { table.unpin(pages_of(1)); }), Errc::invalid_argument);
    table.evict(pages_of(1, 2));  // evictable: not pinned
    table.check_invariants(baseline_);
}

// Windows left at 0 hold the budget, and as much more as the device could give a raised budget:
// raising it to the device's memory works, one page more is refused with the numbers.
TEST_P(PageTableTest, WindowsLeftAtZeroHoldWhatTheDeviceCanGiveTheBudget) {
    auto settings = small_table(4);
    settings.pool.map_windows = true;
    settings.pool.window_pages = 0;
    const std::size_t device = backend_->memory_info().total / page;
    const std::size_t most =
        std::max<std::size_t>(4, std::min(device, PagePoolSettings::default_window_pages));
    EXPECT_EQ(with_window_pages(*backend_, settings).pool.window_pages, most);
    PageTable table(*backend_, settings);
    table.commit(pages_of(1, 2));
    table.set_budget(most * page);
    EXPECT_EQ(table.budget_pages(), most);
    try {
        table.set_budget((most + 1) * page);
        ADD_FAILURE() << "a budget past the windows was taken";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_range);
        EXPECT_NE(error.arguments().find(detail::concat("window_pages=", most)), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(table.budget_pages(), most);
    // A budget beyond the device's memory gets windows for itself.
    settings.budget_bytes = (most + 3) * page;
    EXPECT_EQ(with_window_pages(*backend_, settings).pool.window_pages, most + 3);
    // Windows chosen by the caller stay as they are.
    settings.pool.window_pages = 6;
    EXPECT_EQ(with_window_pages(*backend_, settings).pool.window_pages, 6u);
}

TEST_P(PageTableTest, InvariantsWithABaselineCompareTheBackend) {
    auto settings = small_table(4);
    settings.pool.map_windows = true;
    settings.pool.window_pages = 8;
    PageTable table(*backend_, settings);
    table.commit(pages_of(1, 2, 3));
    table.check_invariants(baseline_);
    const LiveResources held = table.held_resources();
    EXPECT_EQ(held.reservations, 2u);  // the region and the windows
    EXPECT_EQ(held.pages, 3u);
    EXPECT_EQ(held.mappings, 6u);  // three pages in the region, three windows
    // Something else in the backend is found.
    PhysicalHandle stray = backend_->create(page);
    EXPECT_EQ(test::error_code_of([&] { table.check_invariants(baseline_); }), Errc::corrupt_data);
    backend_->release(stray);
    table.check_invariants(baseline_);
}

TEST_P(PageTableTest, FailedCreateRollsBack) {
    FaultInjectingBackend faulty(*backend_);
    PageTable table(faulty, small_table(8));
    table.commit(pages_of(1));
    faulty.add_rule({BackendOperation::create, Errc::backend_failure, 3});
    EXPECT_EQ(test::error_code_of([&] { table.commit(pages_of(2, 3, 4)); }), Errc::backend_failure);
    EXPECT_EQ(table.resident_count(), 1u);
    table.check_invariants();
    faulty.clear_rules();
    table.commit(pages_of(2, 3, 4));
    EXPECT_EQ(table.resident_count(), 4u);
    table.check_invariants();
}

TEST_P(PageTableTest, RecycledPagesKeepTheirSlotsAndGenerationsGrow) {
    Backend& backend = *backend_;
    Observer observer;
    auto settings = small_table(2);
    observer.attach(settings);
    PageTable table(backend, settings);
    auto first = table.commit(pages_of(1, 2));
    auto next = table.commit(pages_of(3, 4));
    std::set<std::uint32_t> slots_before{first[0].physical.slot, first[1].physical.slot};
    std::set<std::uint32_t> slots_after{next[0].physical.slot, next[1].physical.slot};
    EXPECT_EQ(slots_before, slots_after);  // the same two physical pages, recycled
    EXPECT_GT(next[0].generation, first[1].generation);
    auto stats = table.statistics();
    EXPECT_EQ(stats.pool.creates, 2u);
    EXPECT_EQ(stats.commits, 4u);
    EXPECT_EQ(stats.evictions, 2u);
}

TEST_P(PageTableTest, LoweredBudgetEvictsAtTheNextCommit) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(6));
    table.commit(range(0, 6));
    table.set_budget(3 * page);
    table.request(pages_of(20));
    table.commit_queued(1);
    EXPECT_EQ(table.resident_count(), 3u);
    EXPECT_TRUE(table.is_resident(20));
    table.check_invariants();
}

TEST_P(PageTableTest, CommitOfResidentPagesSucceedsOverALoweredBudget) {
    PageTable table(*backend_, small_table(6));
    table.commit(range(0, 6));
    table.set_budget(2 * page);
    // No new page is needed: the pages are touched and pinned, nothing is evicted.
    std::vector<PageMapping> mappings;
    EXPECT_NO_THROW(mappings = table.commit(range(0, 4), /*pin=*/true));
    EXPECT_EQ(mappings.size(), 4u);
    auto stats = table.statistics();
    EXPECT_EQ(stats.resident_pages, 6u);
    EXPECT_EQ(stats.evictions, 0u);
    EXPECT_EQ(stats.pinned_pages, mappings.size());
    table.unpin(range(0, mappings.size()));
    // The same with a frame in flight, evicting ahead.
    PageTableSettings settings = small_table(6);
    settings.evict_ahead_pages = 4;
    PageTable ahead(*backend_, settings);
    ahead.commit(range(0, 6));
    ahead.set_budget(2 * page);
    const FrameId frame = ahead.begin_frame();
    EXPECT_NO_THROW(mappings = ahead.commit(range(0, 4)));
    EXPECT_EQ(ahead.statistics().evictions, 0u);
    ahead.complete_frame(frame);
    table.check_invariants();
    ahead.check_invariants();
}

TEST_P(PageTableTest, EvictOverBudgetShrinksInBoundedStepsByRecency) {
    Observer observer;
    auto settings = small_table(16);
    observer.attach(settings);
    PageTable table(*backend_, settings);
    table.commit(range(0, 16));
    table.request(range(8, 8));  // 8..15 are now the most recently used
    const std::size_t pages_before = backend_->live_resources().pages;
    observer.order.clear();
    table.set_budget(8 * page);
    EXPECT_EQ(table.resident_count(), 16u) << "a lowered budget alone evicts nothing";
    std::vector<std::size_t> steps;
    for (std::size_t left = table.evict_over_budget(3); left > 0;
         left = table.evict_over_budget(3)) {
        steps.push_back(left);
        EXPECT_EQ(table.resident_count(),
                  16u - std::accumulate(steps.begin(), steps.end(), std::size_t{0}));
        table.check_invariants(baseline_);
        ASSERT_LT(steps.size(), 10u) << "evict_over_budget does not stop";
    }
    EXPECT_EQ(steps, (std::vector<std::size_t>{3, 3, 2}));
    EXPECT_EQ(table.evict_over_budget(3), 0u);
    EXPECT_EQ(table.resident_count(), 8u);
    for (PageIndex p = 8; p < 16; ++p) EXPECT_TRUE(table.is_resident(p)) << p;
    EXPECT_EQ(observer.order,
              (std::vector<std::string>{"-0", "-1", "-2", "-3", "-4", "-5", "-6", "-7"}));
    auto stats = table.statistics();
    EXPECT_EQ(stats.over_budget_evictions, 8u);
    EXPECT_EQ(stats.evictions, 8u);
    // The pool keeps the evicted pages idle (its threshold is unlimited)...
    EXPECT_EQ(stats.pool.idle_pages, 8u);
    EXPECT_EQ(backend_->live_resources().pages, pages_before);
    // ...until its threshold follows the budget: then they leave the backend.
    table.set_budget(8 * page, /*release_idle=*/true);
    stats = table.statistics();
    EXPECT_EQ(stats.pool.release_threshold, 8 * page);
    EXPECT_EQ(stats.pool.idle_pages, 0u);
    EXPECT_EQ(stats.pool.releases, 8u);
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + 8);
    table.check_invariants(baseline_);
    // A raised budget fills again, and the pool keeps what it holds.
    table.set_budget(16 * page, /*release_idle=*/true);
    EXPECT_EQ(table.statistics().pool.release_threshold, 16 * page);
    table.request(range(20, 8));
    EXPECT_EQ(table.commit_queued(8).size(), 8u);
    EXPECT_EQ(table.resident_count(), 16u);
    EXPECT_EQ(table.evict_over_budget(3), 0u);
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + 16);
    table.check_invariants(baseline_);
}

TEST_P(PageTableTest, EvictOverBudgetSparesPinnedPagesAndPagesOfFramesInFlight) {
    PageTable table(*backend_, small_table(8));
    table.commit(pages_of(0, 1), /*pin=*/true);
    table.commit(range(2, 6));
    const FrameId frame = table.begin_frame();
    table.request(pages_of(2, 3));  // used by the frame in flight
    table.set_budget(1 * page, /*release_idle=*/true);
    // Only 4..7 may go; the frame in flight may sample them, so they are held back.
    EXPECT_EQ(table.evict_over_budget(100), 4u);
    for (PageIndex p : {4, 5, 6, 7}) EXPECT_FALSE(table.is_resident(p)) << p;
    auto stats = table.statistics();
    EXPECT_EQ(stats.resident_pages, 4u);
    EXPECT_EQ(stats.deferred_pages, 4u);
    EXPECT_EQ(stats.pool.used_bytes, 8 * page) << "held back, not in the pool yet";
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + 8);
    // Nothing more can go while the frame is in flight.
    EXPECT_EQ(table.evict_over_budget(100), 0u);
    EXPECT_EQ(table.resident_count(), 4u);
    table.check_invariants(baseline_);
    table.complete_frame(frame);
    // The held-back pages reach the pool (and leave the backend), then 2 and 3 go; the pinned
    // pages stay, above the budget.
    EXPECT_EQ(table.evict_over_budget(100), 6u);
    EXPECT_EQ(table.evict_over_budget(100), 0u);
    stats = table.statistics();
    EXPECT_EQ(stats.resident_pages, 2u);
    EXPECT_EQ(stats.deferred_pages, 0u);
    EXPECT_EQ(stats.over_budget_evictions, 6u);
    EXPECT_EQ(stats.pool.used_bytes, 2 * page);
    EXPECT_TRUE(table.is_resident(0));
    EXPECT_TRUE(table.is_resident(1));
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + 2);
    table.check_invariants(baseline_);
    table.unpin(pages_of(0, 1));
}

TEST_P(PageTableTest, EvictOverBudgetHoldsPagesBackUntilTheirFramesComplete) {
    Observer observer;
    auto settings = small_table(8);
    observer.attach(settings);
    PageTable table(*backend_, settings);
    table.commit(range(0, 8));
    const FrameId frame1 = table.begin_frame();  // may sample every page, asked for or not
    table.set_budget(4 * page, /*release_idle=*/true);
    EXPECT_EQ(table.evict_over_budget(2), 2u);
    EXPECT_EQ(table.evict_over_budget(2), 2u);
    // Four evicted and held back: they count as leaving, so nothing more is evicted.
    EXPECT_EQ(table.evict_over_budget(2), 0u);
    EXPECT_EQ(table.resident_count(), 4u);
    EXPECT_EQ(observer.order.size(), 12u) << "8 commits and 4 evictions reported";
    auto stats = table.statistics();
    EXPECT_EQ(stats.deferred_pages, 4u);
    EXPECT_EQ(stats.pool.used_bytes, 8 * page);
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + 8);
    table.check_invariants(baseline_);
    // A frame begun after the evictions cannot reach them; only frame 1 holds them back.
    const FrameId frame2 = table.begin_frame();
    table.complete_frame(frame1);
    EXPECT_EQ(table.evict_over_budget(3), 3u);
    EXPECT_EQ(table.evict_over_budget(3), 1u);
    EXPECT_EQ(table.evict_over_budget(3), 0u);
    stats = table.statistics();
    EXPECT_EQ(stats.deferred_pages, 0u);
    EXPECT_EQ(stats.deferred_reused, 0u);
    EXPECT_EQ(stats.over_budget_evictions, 4u);
    EXPECT_EQ(stats.pool.used_bytes, 4 * page);
    EXPECT_EQ(backend_->live_resources().pages, baseline_.pages + 4);
    table.check_invariants(baseline_);
    table.complete_frame(frame2);
}

TEST_P(PageTableTest, BudgetsBeyondThePoolsWindowsAreRefused) {
    auto settings = small_table(4);
    settings.pool.map_windows = true;
    settings.pool.window_pages = 8;
    PageTable table(*backend_, settings);
    EXPECT_EQ(test::error_code_of([&] { table.set_budget(9 * page, true); }), Errc::out_of_range);
    EXPECT_EQ(table.budget_pages(), 4u);
    EXPECT_EQ(table.statistics().pool.release_threshold, SIZE_MAX);
    table.set_budget(8 * page, true);
    EXPECT_EQ(table.budget_pages(), 8u);
    EXPECT_EQ(table.statistics().pool.release_threshold, 8 * page);
    table.commit(range(0, 8));
    EXPECT_EQ(table.resident_count(), 8u);
}

TEST_P(PageTableTest, CancelDropsQueuedPages) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(6));
    table.request(range(0, 5));
    table.cancel(pages_of(1, 3, 99));
    EXPECT_EQ(table.queued_count(), 3u);
    auto committed = table.commit_queued(10);
    ASSERT_EQ(committed.size(), 3u);
    EXPECT_EQ(committed[1].page, 2u);
    table.check_invariants();
}

TEST_P(PageTableTest, StatisticsCountRequestsHitsAndBackendCalls) {
    Backend& backend = *backend_;
    PageTable table(backend, small_table(16));
    table.request(range(0, 8));
    table.commit_queued(8);
    table.request(range(4, 8));  // 4 hits, 4 new
    auto stats = table.statistics();
    EXPECT_EQ(stats.requests, 16u);
    EXPECT_EQ(stats.hits, 4u);
    EXPECT_EQ(stats.commits, 8u);
    EXPECT_EQ(stats.region.maps, 8u);
    EXPECT_EQ(stats.region.set_access_calls, 1u);  // one contiguous run
    EXPECT_EQ(stats.commit_batches, 1u);
    EXPECT_EQ(stats.commit_latency.count, 8u);
    EXPECT_GT(stats.commit_latency.p50_us, 0.0);
    EXPECT_LE(stats.commit_latency.p50_us, stats.commit_latency.p99_us);
}

// Many threads request, commit, pin, write, check and evict at once; run under ThreadSanitizer
// in CI. Every page carries its own number and generation, checked whenever it is pinned.
TEST_P(PageTableTest, ConcurrencyManyThreadsKeepEveryPageIntact) {
    Backend& backend = *backend_;
    auto settings = small_table(24);
    PageTable table(backend, settings);
    const int threads = 4;
    const int rounds = test::under_thread_sanitizer ? 150 : 600;
    std::atomic<int> integrity_errors{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::mt19937 random(t);
            for (int i = 0; i < rounds; ++i) {
                // Requests and queued commits touch every page; each thread pins and stamps
                // only pages of its own (page % threads == t), since two threads writing one
                // page's bytes at once would race in the test, not in the table.
                const PageIndex page = random() % 64;
                const PageIndex own_page = page - page % threads + t;
                switch (random() % 4) {
                    case 0:
                        table.request(pages_of(page));
                        break;
                    case 1:
                        try {
                            table.commit_queued(4);
                        } catch (const Error& error) {
                            ADD_FAILURE() << error.what();
                        }
                        break;
                    default:
                        try {
                            auto mapped = table.commit(pages_of(own_page), /*pin=*/true);
                            const std::uint64_t stamp[2] = {own_page, mapped[0].generation};
                            const DeviceAddress address = table.address_of(own_page);
                            std::uint64_t seen[2] = {};
                            backend.read(seen, address, sizeof(seen));
                            // Freshly committed pages hold whatever the pool had: stamp them.
                            if (seen[0] != stamp[0] || seen[1] != stamp[1]) {
                                backend.write(address, stamp, sizeof(stamp));
                            }
                            backend.read(seen, address, sizeof(seen));
                            if (seen[0] != stamp[0] || seen[1] != stamp[1]) ++integrity_errors;
                            table.unpin(pages_of(own_page));
                        } catch (const Error& error) {
                            // Another thread holds it mid-commit or pins fill the budget.
                            if (error.code() != Errc::busy &&
                                error.code() != Errc::budget_exhausted) {
                                ADD_FAILURE() << error.what();
                            }
                        }
                }
            }
        });
    }
    for (auto& worker : workers) worker.join();
    EXPECT_EQ(integrity_errors.load(), 0);
    table.check_invariants();
    EXPECT_LE(table.resident_count(), 24u);
}

TEST_P(PageTableTest, UnmappedTablesReachPagesThroughWindowsWithoutRemapping) {
    Backend& backend = *backend_;
    auto settings = small_table(3);
    settings.map_into_region = false;
    settings.pool.map_windows = true;
    settings.pool.window_pages = 8;
    PageTable table(backend, settings);
    EXPECT_FALSE(table.maps_into_region());
    table.commit(pages_of(1, 2, 3));
    const std::uint64_t value = 99;
    backend.write(table.data_address(2), &value, sizeof(value));
    const auto mappings_after_fill = backend.live_resources().mappings;
    // Recycling three pages makes no VMM call: the windows stay, the region stays empty.
    table.commit(pages_of(4, 5, 6));
    EXPECT_EQ(backend.live_resources().mappings, mappings_after_fill);
    EXPECT_EQ(table.region().committed_count(), 0u);
    EXPECT_EQ(table.statistics().region.maps, 0u);
    EXPECT_EQ(table.statistics().evictions, 3u);
    // One of 4, 5, 6 now holds page 2's old physical page, bytes and all.
    bool found = false;
    for (PageIndex page : {4, 5, 6}) {
        std::uint64_t seen = 0;
        backend.read(&seen, table.data_address(page), sizeof(seen));
        found = found || seen == value;
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(test::error_code_of([&] { table.data_address(1); }), Errc::not_mapped);
    EXPECT_EQ(test::error_code_of([&] { table.protect(pages_of(4), Access::read); }),
              Errc::not_supported);
    table.check_invariants();
}

INSTANTIATE_TEST_SUITE_P(Backends, PageTableTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
