#include <gtest/gtest.h>

#include <string>

#include <map>

#include "../support/leak_guard.hpp"

#include "vtpage/backend/fault_injecting_backend.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/core/page_pool.hpp"

namespace vtpage {
namespace {

TEST(PagePool, RecyclesPagesAndCountsHitsAndMisses) {
    HostBackend backend;
    PagePool pool(backend);
    auto first = pool.acquire(3);
    EXPECT_EQ(pool.statistics().misses, 3u);
    pool.release(first);
    auto second = pool.acquire(2);
    auto stats = pool.statistics();
    EXPECT_EQ(stats.hits, 2u);
    EXPECT_EQ(stats.creates, 3u);
    EXPECT_EQ(stats.used_bytes, 2 * 2_MiB);
    EXPECT_EQ(stats.reserved_bytes, 3 * 2_MiB);
    EXPECT_EQ(stats.used_bytes_high, 3 * 2_MiB);
    EXPECT_EQ(stats.idle_pages, 1u);
    // Recycled pages are the same physical pages with the same slots.
    EXPECT_TRUE(second[0] == first[2] || second[0] == first[1] || second[0] == first[0]);
    pool.release(second);
}

TEST(PagePool, SlotsAreDenseAndReused) {
    HostBackend backend;
    PagePool pool(backend, {.release_threshold = 0});
    auto pages = pool.acquire(4);
    std::vector<std::uint32_t> slots;
    for (auto& page : pages) slots.push_back(page.slot);
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(slots, (std::vector<std::uint32_t>{0, 1, 2, 3}));
    pool.release(pages[1]);  // threshold 0: released to the backend at once
    EXPECT_EQ(pool.statistics().releases, 1u);
    auto again = pool.acquire();
    EXPECT_EQ(again.slot, pages[1].slot);
    pool.release(again);
    pages.erase(pages.begin() + 1);
    pool.release(pages);
}

TEST(PagePool, ReleaseThresholdKeepsThatManyBytes) {
    HostBackend backend;
    PagePool pool(backend, {.release_threshold = 4 * 2_MiB});
    auto pages = pool.acquire(10);
    pool.release(pages);  // a trim point: keep 4 pages' worth
    auto stats = pool.statistics();
    EXPECT_EQ(stats.reserved_bytes, 4 * 2_MiB);
    EXPECT_EQ(stats.idle_pages, 4u);
    EXPECT_EQ(stats.releases, 6u);
    EXPECT_EQ(backend.live_resources().pages, 4u);
    pool.trim_to(2_MiB);
    EXPECT_EQ(backend.live_resources().pages, 1u);
    pool.set_release_threshold(0);
    EXPECT_EQ(backend.live_resources().pages, 0u);
    EXPECT_EQ(pool.statistics().reserved_bytes_high, 10 * 2_MiB);
}

TEST(PagePool, MaximumThresholdKeepsEverything) {
    HostBackend backend;
    PagePool pool(backend);  // SIZE_MAX by default
    pool.release(pool.acquire(8));
    EXPECT_EQ(backend.live_resources().pages, 8u);
    pool.trim();
    EXPECT_EQ(backend.live_resources().pages, 8u);
}

TEST(PagePool, AcquireIsAllOrNothing) {
    HostBackend backend(HostBackendSettings{2_MiB, 6 * 2_MiB});
    PagePool pool(backend);
    auto held = pool.acquire(2);
    try {
        pool.acquire(5);  // only 4 more fit
        FAIL() << "acquired more pages than the backend has";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_memory);
    }
    auto stats = pool.statistics();
    EXPECT_EQ(stats.used_bytes, 2 * 2_MiB);
    EXPECT_EQ(stats.idle_pages, 4u);  // the pages created on the way stay pooled
    auto four = pool.acquire(4);
    pool.release(four);
    pool.release(held);
}

TEST(PagePool, ReleasingAForeignPageIsRefused) {
    HostBackend backend;
    PagePool pool(backend);
    PooledPage stranger{backend.create(2_MiB), 7};
    try {
        pool.release(stranger);
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
    }
    auto page = pool.acquire();
    pool.release(page);
    EXPECT_THROW(pool.release(page), Error);  // twice
    backend.release(stranger.handle);
}

TEST(PagePool, WarmsUpInTheBackground) {
    HostBackend backend;
    std::atomic<int> created{0};
    PagePoolSettings settings;
    settings.warm_up_pages = 16;
    settings.on_created = [&](const PooledPage&) { ++created; };
    PagePool pool(backend, settings);
    pool.wait_for_warm_up();
    EXPECT_EQ(created.load(), 16);
    EXPECT_EQ(pool.statistics().idle_pages, 16u);
    auto pages = pool.acquire(16);  // all hits
    EXPECT_EQ(pool.statistics().hits, 16u);
    EXPECT_EQ(pool.statistics().misses, 0u);
    pool.release(pages);
}

// A warm-up never holds more than the release threshold keeps: idle pages beyond it would be
// created only to be released at the next trim point.
TEST(PagePool, WarmUpStopsAtTheReleaseThreshold) {
    HostBackend backend;
    const std::size_t page = backend.granularity().minimum;
    PagePoolSettings settings;
    settings.release_threshold = 5 * page;
    PagePool pool(backend, settings);
    pool.warm_up(16, /*background=*/true);
    pool.wait_for_warm_up();
    EXPECT_EQ(pool.statistics().idle_pages, 5u);
    pool.set_release_threshold(2 * page);  // trims to 2 idle pages
    pool.warm_up(16, /*background=*/false);
    EXPECT_EQ(pool.statistics().idle_pages, 2u);
    EXPECT_EQ(pool.statistics().creates, 5u);
    pool.stop_warm_up();  // none running: returns at once
}

TEST(PagePool, DestroyedCallbackRunsBeforeRelease) {
    HostBackend backend;
    std::vector<std::uint32_t> destroyed;
    PagePoolSettings settings;
    settings.release_threshold = 0;
    settings.on_destroyed = [&](const PooledPage& page) { destroyed.push_back(page.slot); };
    PagePool pool(backend, settings);
    auto page = pool.acquire();
    pool.release(page);
    EXPECT_EQ(destroyed, std::vector<std::uint32_t>{page.slot});
}

// A trim that releases many pages announces them together first (interop waits for the device
// once for the batch), then each page's on_destroyed, in that order.
TEST(PagePool, ATrimAnnouncesItsBatchOnceBeforeEachPagesOnDestroyed) {
    HostBackend backend;
    std::vector<std::string> calls;
    PagePoolSettings settings;
    settings.on_destroying = [&](std::span<const PooledPage> pages) {
        calls.push_back("batch of " + std::to_string(pages.size()));
    };
    settings.on_destroyed = [&](const PooledPage& page) {
        calls.push_back("page " + std::to_string(page.slot));
    };
    PagePool pool(backend, settings);
    auto pages = pool.acquire(6);
    pool.release(pages);  // the threshold keeps them all
    EXPECT_TRUE(calls.empty());
    pool.set_release_threshold(2 * pool.page_size());
    ASSERT_EQ(calls.size(), 5u);
    EXPECT_EQ(calls[0], "batch of 4");
    for (std::size_t i = 1; i < calls.size(); ++i) EXPECT_EQ(calls[i].rfind("page ", 0), 0u);
    EXPECT_EQ(pool.statistics().reserved_bytes, 2 * pool.page_size());
}

TEST(PagePool, FailedReleaseIsTriedAgainAndThePageIsNeverHandedOutAgain) {
    HostBackend host;
    test::LeakGuard leaks(host);
    FaultInjectingBackend faulty(host);
    int destroyed = 0;
    {
        PagePool pool(faulty, {.release_threshold = 0,
                               .on_destroyed = [&](const PooledPage&) { ++destroyed; },
                               .log = Log(silent_log())});
        auto page = pool.acquire();
        faulty.add_rule({BackendOperation::release, Errc::backend_failure, 1});
        pool.release(page);
        EXPECT_EQ(pool.statistics().idle_pages, 0u);
        EXPECT_EQ(pool.statistics().doomed_pages, 1u);
        EXPECT_EQ(host.live_resources().pages, 1u);
        pool.check_invariants();
        // Not handed out again: a new page is created instead.
        auto other = pool.acquire();
        EXPECT_NE(other.handle, page.handle);
        EXPECT_NE(other.slot, page.slot);
        pool.release(other);  // a trim point: both go now
        EXPECT_EQ(pool.statistics().doomed_pages, 0u);
        EXPECT_EQ(host.live_resources().pages, 0u);
        EXPECT_EQ(destroyed, 2);  // once per page, though the first took two tries
        pool.check_invariants();
    }
    leaks.expect_clean();
}

TEST(PagePool, DestructorRetriesRefusedReleases) {
    HostBackend host;
    FaultInjectingBackend faulty(host);
    {
        PagePool pool(faulty, {.log = Log(silent_log())});
        pool.release(pool.acquire(3));
        faulty.add_rule({BackendOperation::release, Errc::backend_failure, 2});
    }
    EXPECT_EQ(host.live_resources().pages, 0u);
}

// What interop does: export each page when the pool creates it. A refused export undoes the
// creation; a refused release during that undo is retried later. No descriptor or page leaks.
TEST(PagePool, RefusedExportUndoesTheCreation) {
    HostBackend host;
    test::LeakGuard leaks(host);
    FaultInjectingBackend faulty(host);
    std::map<std::uint32_t, UniqueFd> exported;
    int destroyed = 0;
    {
        PagePoolSettings settings;
        settings.on_created = [&](const PooledPage& page) {
            exported[page.slot] = faulty.export_fd(page.handle);
        };
        settings.on_destroyed = [&](const PooledPage& page) {
            exported.erase(page.slot);
            ++destroyed;
        };
        settings.log = Log(silent_log());
        PagePool pool(faulty, settings);
        faulty.add_rule({BackendOperation::export_fd, Errc::out_of_memory, 2});
        faulty.add_rule({BackendOperation::release, Errc::backend_failure, 1});
        EXPECT_THROW(pool.acquire(3), Error);  // the second page's export fails
        EXPECT_EQ(exported.size(), 1u);        // the first page's, idle now
        EXPECT_EQ(pool.statistics().idle_pages, 1u);
        EXPECT_EQ(pool.statistics().doomed_pages, 1u);  // its release was refused
        pool.check_invariants();
        auto pages = pool.acquire(3);
        EXPECT_EQ(exported.size(), 3u);
        pool.release(pages);  // a trim point: the doomed page goes now
        EXPECT_EQ(pool.statistics().doomed_pages, 0u);
        pool.check_invariants();
    }
    EXPECT_TRUE(exported.empty());
    EXPECT_EQ(destroyed, 3);  // never for the page whose creation was undone
    leaks.expect_clean();
}

}  // namespace
}  // namespace vtpage

namespace vtpage {
namespace {

TEST(PagePoolWindows, MapsEachPageOnceForItsWholeLife) {
    HostBackend backend;
    const auto baseline = backend.live_resources();
    {
        PagePool pool(backend,
                      {.release_threshold = 2 * 2_MiB, .map_windows = true, .window_pages = 16});
        EXPECT_TRUE(pool.maps_windows());
        auto pages = pool.acquire(4);
        for (const auto& page : pages) {
            ASSERT_NE(page.window, 0u);
            const std::uint64_t stamp = page.slot * 1000 + 7;
            backend.write(page.window + 64, &stamp, sizeof(stamp));
        }
        EXPECT_EQ(backend.live_resources().mappings, baseline.mappings + 4);
        pool.release(pages);  // keeps two, releases two (and unmaps their windows)
        EXPECT_EQ(backend.live_resources().mappings, baseline.mappings + 2);
        auto again = pool.acquire(2);
        for (const auto& page : again) {
            std::uint64_t stamp = 0;
            backend.read(&stamp, page.window + 64, sizeof(stamp));
            EXPECT_EQ(stamp, page.slot * 1000 + 7) << "a recycled page kept its window and bytes";
        }
        pool.release(again);
    }
    EXPECT_EQ(backend.live_resources(), baseline);
}

TEST(PagePoolWindows, APageWhoseReleaseFailsNeverComesBackWithoutItsWindow) {
    HostBackend host;
    test::LeakGuard leaks(host);
    FaultInjectingBackend faulty(host);
    {
        PagePool pool(faulty, {.release_threshold = 0,
                               .map_windows = true,
                               .window_pages = 4,
                               .log = Log(silent_log())});
        auto page = pool.acquire();
        faulty.add_rule({BackendOperation::release, Errc::backend_failure, 1});
        pool.release(page);  // the window is unmapped, then the release is refused
        EXPECT_EQ(pool.statistics().doomed_pages, 1u);
        pool.check_invariants();
        auto next = pool.acquire(2);
        for (const auto& p : next) {
            std::uint64_t value = p.slot;  // each page reaches its bytes through its window
            faulty.write(p.window, &value, sizeof(value));
        }
        pool.check_invariants();
        pool.release(next);
    }
    leaks.expect_clean();
}

TEST(PagePoolWindows, AFullWindowRegionIsATypedError) {
    HostBackend backend;
    PagePool pool(backend, {.map_windows = true, .window_pages = 2});
    auto two = pool.acquire(2);
    try {
        pool.acquire();
        FAIL() << "a third page fit in a two-page window region";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_memory);
    }
    EXPECT_EQ(backend.live_resources().pages, 2u);  // the refused page was released again
    pool.release(two);
}

}  // namespace
}  // namespace vtpage
