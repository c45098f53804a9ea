// The page loader on its own: stored pages read through its read queue into its read buffers and
// decoded by its threads -- what happens when a read outlasts the loader, when no decode
// thread can have a stream on the device, and how many decode threads take pages.
#include "streaming/streamer/page_loader.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "../support/process_threads.hpp"
#include "../support/temporary_folder.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;

// Holds every read before it is made until release(); counts the reads made.
class HeldReadsLayer final : public FileLayer {
public:
    void release() {
        {
            std::lock_guard lock(mutex_);
            holding_ = false;
        }
        changed_.notify_all();
    }
    bool wait_held(std::size_t count, std::chrono::milliseconds limit) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, limit, [&] { return held_ >= count; });
    }
    bool wait_read(std::size_t count, std::chrono::milliseconds limit) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, limit, [&] { return read_ >= count; });
    }
    ReadDecision decide(const ReadAttempt&) override {
        std::unique_lock lock(mutex_);
        ++held_;
        changed_.notify_all();
        changed_.wait(lock, [&] { return !holding_; });
        return ReadDecision::pass();
    }
    std::int64_t read(int fd, void* destination, std::size_t size, std::uint64_t offset) override {
        const std::int64_t result = FileLayer::read(fd, destination, size, offset);
        std::lock_guard lock(mutex_);
        ++read_;
        changed_.notify_all();
        return result;
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool holding_ = true;
    std::size_t held_ = 0;
    std::size_t read_ = 0;
};

// A baked file seen through a source that watches its decodes: everything else is the file's.
class WatchedDecodes : public TileSource {
public:
    WatchedDecodes(std::shared_ptr<const TileSource> file, std::string watch)
        : file_(std::move(file)), watch_(std::move(watch)) {}

    TextureShape shape() const noexcept override { return file_->shape(); }
    std::string name() const override { return watch_ + " " + file_->name(); }
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override {
        file_->fill_host(page, destination);
    }
    std::optional<StoredPageRead> stored_read(std::uint64_t page) const override {
        return file_->stored_read(page);
    }
    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override {
        file_->decode_stored(page, stored, destination);
    }

protected:
    const TileSource& file() const { return *file_; }

private:
    std::shared_ptr<const TileSource> file_;
    std::string watch_;
};

// A baked file whose decodes wait, in the order they began, until let_through lets them go, and
// are counted while they run: how many run at once is how many decode threads take pages.
class GatedDecodes final : public WatchedDecodes {
public:
    explicit GatedDecodes(std::shared_ptr<const TileSource> file)
        : WatchedDecodes(std::move(file), "gated") {}

    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override {
        {
            std::unique_lock lock(mutex_);
            const std::size_t ticket = began_++;
            ++running_;
            most_ = std::max(most_, running_);
            changed_.notify_all();
            changed_.wait(lock, [&] { return ticket < let_through_; });
        }
        WatchedDecodes::decode_stored(page, stored, destination);
        std::lock_guard lock(mutex_);
        --running_;
        changed_.notify_all();
    }

    // The next `decodes` decodes, begun or not, in the order they began.
    void let_through(std::size_t decodes) {
        {
            std::lock_guard lock(mutex_);
            let_through_ += decodes;
        }
        changed_.notify_all();
    }
    bool wait_running(std::size_t count, std::chrono::milliseconds limit) const {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, limit, [&] { return running_ >= count; });
    }
    std::size_t running() const {
        std::lock_guard lock(mutex_);
        return running_;
    }
    // The most that ran at once since the last call.
    std::size_t take_most() const {
        std::lock_guard lock(mutex_);
        return std::exchange(most_, running_);
    }

private:
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    mutable std::size_t running_ = 0;
    mutable std::size_t most_ = 0;
    mutable std::size_t began_ = 0;
    mutable std::size_t let_through_ = 0;
};

using test::thread_count;

class PageLoaderTest : public testing::Test {
protected:
    void SetUp() override {
        path_ = folder_.file("image.vtex");
        // Four parts a page: the tests of parts count them, a thread each.
        test::write_rgba8_archive(test::make_test_image(900, 700, 5), path_, 4);
        source_ = std::make_shared<BakedFileSource>(path_);
    }

    PageLoaderSettings settings() const {
        PageLoaderSettings s;
        s.decode_threads = 2;
        s.read_buffers = 4;
        s.reads.depth = 4;
        s.reads.backend = FileReadBackend::threads;
        s.reads.log = Log(silent_log());
        s.log = Log(silent_log());
        return s;
    }

    PageLoad load(std::uint64_t page) {
        return {.source = source_,
                .layout_page = page,
                .destination = reinterpret_cast<DeviceAddress>(destination_.data()),
                .tag = page};
    }

    test::TemporaryFolder folder_;
    std::string path_;
    std::shared_ptr<BakedFileSource> source_;
    std::vector<std::byte> destination_ = std::vector<std::byte>(page_bytes);
};

// A read still held when the loader is destroyed outlasts the read queue's shutdown timeout and
// writes into its read buffer afterwards: that memory is still the read's (AddressSanitizer
// reports a heap-use-after-free where it was freed with the loader).
TEST_F(PageLoaderTest, AReadThatOutlastsTheLoaderWritesIntoMemoryItStillOwns) {
    // It outlives the test: the read's thread, detached, returns from it after the test saw
    // the read made.
    static HeldReadsLayer layer;
    std::atomic<std::size_t> reported{0};
    {
        PageLoaderSettings s = settings();
        s.reads.layer = &layer;
        s.reads.shutdown_timeout = 50ms;
        s.on_loaded = [&](const PageLoadResult&) { ++reported; };
        PageLoader loader(std::move(s));
        loader.load({load(0)});
        ASSERT_TRUE(layer.wait_held(1, 20s));
    }  // gives up waiting for the read after 50 ms
    layer.release();
    ASSERT_TRUE(layer.wait_read(1, 20s));
    std::this_thread::sleep_for(100ms);  // the read's thread hands it back and ends
    EXPECT_EQ(reported.load(), 0u) << "a page dropped at destruction has no callback";
}

double process_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}

// A loader with nothing to read leaves the cores alone: its threads wait instead of polling (the
// reaper once spun on the read queue, whose wait returns at once when nothing is in flight, and
// took a core from the renderer). A slow machine only lowers the CPU time the loop could take.
TEST_F(PageLoaderTest, AnIdleLoaderTakesNoCpuTime) {
    PageLoader loader(settings());
    loader.load({load(0)});
    for (int i = 0; i < 1000 && loader.statistics().loaded == 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(loader.statistics().loaded, 1u);
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(500ms);
    EXPECT_LT(process_cpu_seconds() - before, 0.05)
        << "CPU seconds taken in half a second with no page to load";
}

// Each decode thread makes one read buffer before the loader is ready (written through, so that
// no read waits for its pages to be faulted in), never more than read_buffers, and loads take
// those first: pages loaded one at a time make no other.
TEST_F(PageLoaderTest, DecodeThreadsMakeTheFirstReadBuffersAhead) {
    std::atomic<std::size_t> loaded{0};
    PageLoaderSettings s = settings();
    ASSERT_EQ(s.decode_threads, 2u);
    ASSERT_EQ(s.read_buffers, 4u);
    s.on_loaded = [&](const PageLoadResult& result) {
        EXPECT_TRUE(result.ok) << result.tag;
        ++loaded;
    };
    PageLoader loader(std::move(s));
    EXPECT_EQ(loader.statistics().read_buffers_made, 2u) << "one per decode thread";
    EXPECT_EQ(loader.statistics().buffers_in_use, 0u);
    for (std::size_t page = 0; page < 3; ++page) {
        loader.load({load(page)});
        for (int i = 0; i < 3000 && loaded.load() <= page; ++i) std::this_thread::sleep_for(10ms);
        ASSERT_EQ(loaded.load(), page + 1);
    }
    EXPECT_EQ(loader.statistics().reads.completed_ok, 3u) << "each page read into a buffer";
    EXPECT_EQ(loader.statistics().read_buffers_made, 2u) << "a buffer made ahead taken each time";

    PageLoaderSettings few = settings();
    few.decode_threads = 3;
    few.read_buffers = 1;
    PageLoader fewer(std::move(few));
    EXPECT_EQ(fewer.statistics().read_buffers_made, 1u) << "never more than read_buffers";
}

// When no decode thread can make its stream on the device, the pages fail with
// device_unavailable instead of waiting for a decode thread that never comes.
TEST_F(PageLoaderTest, WithoutAStreamOnAnyDecodeThreadPagesFailWithDeviceUnavailable) {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<PageLoadResult> results;
    PageLoaderSettings s = settings();
    s.device = 1 << 20;  // no such device, in a build with CUDA or without
    s.on_loaded = [&](const PageLoadResult& result) {
        {
            std::lock_guard lock(mutex);
            results.push_back(result);
        }
        changed.notify_all();
    };
    PageLoader loader(std::move(s));
    loader.load({load(0), load(1), load(2)});
    {
        std::unique_lock lock(mutex);
        ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return results.size() == 3; }))
            << results.size() << " of 3 pages reported: the others wait for a decode thread";
        for (const PageLoadResult& result : results) {
            EXPECT_FALSE(result.ok) << result.tag;
            try {
                std::rethrow_exception(result.error);
            } catch (const Error& error) {
                EXPECT_EQ(error.code(), Errc::device_unavailable) << error.what();
            } catch (...) {
                ADD_FAILURE() << "not a vtpage::Error";
            }
        }
    }
    const PageLoaderStatistics stats = loader.statistics();
    EXPECT_EQ(stats.failed, 3u);
    EXPECT_EQ(stats.outstanding, 0u);
    EXPECT_EQ(stats.buffers_in_use, 0u);
}

// Records the scheduling policy and nice value of the threads that decode its pages.
class SchedulingRecorder final : public WatchedDecodes {
public:
    explicit SchedulingRecorder(std::shared_ptr<const TileSource> file)
        : WatchedDecodes(std::move(file), "recorded") {}

    struct Seen {
        int policy = -1;
        int nice = 0;
    };

    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override {
        // With 0, both ask about the calling thread on Linux.
        const Seen seen{::sched_getscheduler(0), ::getpriority(PRIO_PROCESS, 0)};
        {
            std::lock_guard lock(mutex_);
            seen_.push_back(seen);
        }
        WatchedDecodes::decode_stored(page, stored, destination);
    }
    std::vector<Seen> seen() const {
        std::lock_guard lock(mutex_);
        return seen_;
    }

private:
    mutable std::mutex mutex_;
    mutable std::vector<Seen> seen_;
};

// The decode threads run at the priority asked for, and only they: the app's thread keeps its
// own. Lowering is always allowed, so every thread is counted as lowered.
TEST_F(PageLoaderTest, DecodeThreadsRunAtThePriorityAskedFor) {
    const int app_policy = ::sched_getscheduler(0);
    const int app_nice = ::getpriority(PRIO_PROCESS, 0);
    struct Case {
        DecodeThreadPriority priority;
        int policy;
        int nice;
    };
    for (const Case& c : {Case{DecodeThreadPriority::normal, app_policy, app_nice},
                          Case{DecodeThreadPriority::low, SCHED_BATCH, std::min(19, app_nice + 10)},
                          Case{DecodeThreadPriority::idle, SCHED_IDLE, app_nice}}) {
        SCOPED_TRACE(int(c.priority));
        auto recorder = std::make_shared<SchedulingRecorder>(source_);
        std::atomic<std::size_t> loaded{0};
        PageLoaderSettings s = settings();
        s.priority = c.priority;
        s.on_loaded = [&](const PageLoadResult& result) {
            EXPECT_TRUE(result.ok) << result.tag;
            ++loaded;
        };
        // Each page into memory of its own: two threads decode at once.
        std::vector<std::vector<std::byte>> destinations(4, std::vector<std::byte>(page_bytes));
        PageLoader loader(std::move(s));
        std::vector<PageLoad> loads;
        for (std::uint64_t page = 0; page < 4; ++page) {
            PageLoad one = load(page);
            one.source = recorder;
            one.destination = reinterpret_cast<DeviceAddress>(destinations[page].data());
            loads.push_back(one);
        }
        loader.load(std::move(loads));
        // SCHED_IDLE threads wait while other processes keep every core busy (a parallel test
        // run under a sanitizer): a minute.
        for (int i = 0; i < 6000 && loaded.load() < 4; ++i) std::this_thread::sleep_for(10ms);
        ASSERT_EQ(loaded.load(), 4u);
        for (const SchedulingRecorder::Seen& seen : recorder->seen()) {
            EXPECT_EQ(seen.policy, c.policy);
            EXPECT_EQ(seen.nice, c.nice);
        }
        EXPECT_EQ(loader.statistics().lowered_decode_threads,
                  c.priority == DecodeThreadPriority::normal ? 0u : 2u);
    }
    EXPECT_EQ(::sched_getscheduler(0), app_policy);
    EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), app_nice);
}

// A baked file whose pages are decoded in parts (format version 4), the parts watched: which
// thread decodes each, and each waits until `together` parts have begun (a page's thread alone
// would wait the whole limit); `failing_part` of page 0 throws instead.
class PartedDecodes final : public WatchedDecodes {
public:
    PartedDecodes(std::shared_ptr<const TileSource> file, std::size_t together,
                  std::optional<std::uint32_t> failing_part)
        : WatchedDecodes(std::move(file), "parted"),
          together_(together),
          failing_part_(failing_part) {}

    std::vector<StoredPart> split_stored(std::uint64_t page,
                                         std::span<const std::byte> stored) const override {
        return file().split_stored(page, stored);
    }
    void decode_stored_part(std::uint64_t page, const StoredPart& part,
                            std::span<std::byte> destination) const override {
        {
            std::unique_lock lock(mutex_);
            threads_.push_back(std::this_thread::get_id());
            changed_.notify_all();
            if (!changed_.wait_for(lock, 20s, [&] { return threads_.size() >= together_; })) {
                ++waited_out_;
            }
        }
        if (page == 0 && failing_part_ == part.index) {
            throw Error(Errc::corrupt_data, "PartedDecodes", "part 2 is damaged");
        }
        file().decode_stored_part(page, part, destination);
    }
    std::vector<std::thread::id> threads() const {
        std::lock_guard lock(mutex_);
        return threads_;
    }
    std::size_t waited_out() const {
        std::lock_guard lock(mutex_);
        return waited_out_;
    }

private:
    std::size_t together_ = 0;
    std::optional<std::uint32_t> failing_part_;
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    mutable std::vector<std::thread::id> threads_;
    mutable std::size_t waited_out_ = 0;
};

// A page stored in four parts, with four decode threads and no other page: the three idle ones
// each take a part while the page's own thread decodes one, and the page is the file's.
TEST_F(PageLoaderTest, IdleDecodeThreadsDecodePartsOfAPageAtOnce) {
    auto parted = std::make_shared<PartedDecodes>(source_, 4, std::nullopt);
    std::atomic<std::size_t> loaded{0};
    PageLoaderSettings s = settings();
    s.decode_threads = 4;
    s.on_loaded = [&](const PageLoadResult& result) {
        EXPECT_TRUE(result.ok) << result.tag;
        ++loaded;
    };
    PageLoader loader(std::move(s));
    PageLoad one = load(0);
    one.source = parted;
    loader.load({one});
    for (int i = 0; i < 3000 && loaded.load() < 1; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(loaded.load(), 1u);
    std::vector<std::thread::id> threads = parted->threads();
    EXPECT_EQ(threads.size(), 4u) << "the page's parts";
    std::sort(threads.begin(), threads.end());
    EXPECT_EQ(std::unique(threads.begin(), threads.end()) - threads.begin(), 4)
        << "four threads, a part each";
    EXPECT_EQ(parted->waited_out(), 0u);
    EXPECT_EQ(loader.statistics().parts_helped, 3u);
    std::vector<std::byte> expected(page_bytes);
    source_->fill_host(0, expected);
    EXPECT_TRUE(destination_ == expected) << "the page decoded in parts is the file's";
}

// A part that fails fails its page, once, with the part's error, after every part taken has
// ended; the next page loads.
TEST_F(PageLoaderTest, APartThatFailsFailsItsPageAndTheNextLoads) {
    auto parted = std::make_shared<PartedDecodes>(source_, 0, 2);
    std::mutex mutex;
    std::vector<PageLoadResult> results;
    PageLoaderSettings s = settings();
    s.decode_threads = 3;
    s.on_loaded = [&](const PageLoadResult& result) {
        std::lock_guard lock(mutex);
        results.push_back(result);
    };
    std::vector<std::byte> second(page_bytes);
    {
        PageLoader loader(std::move(s));
        PageLoad bad = load(0), good = load(1);
        bad.source = good.source = parted;
        good.destination = reinterpret_cast<DeviceAddress>(second.data());
        loader.load({bad, good});
        for (int i = 0; i < 3000 && loader.statistics().outstanding > 0; ++i) {
            std::this_thread::sleep_for(10ms);
        }
        EXPECT_EQ(loader.statistics().failed, 1u);
        EXPECT_EQ(loader.statistics().loaded, 1u);
    }
    ASSERT_EQ(results.size(), 2u);
    for (const PageLoadResult& result : results) {
        EXPECT_EQ(result.ok, result.tag == 1) << result.tag;
        if (result.ok) continue;
        try {
            std::rethrow_exception(result.error);
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::corrupt_data);
            EXPECT_NE(std::string(error.what()).find("part 2 is damaged"), std::string::npos);
        }
    }
    std::vector<std::byte> expected(page_bytes);
    source_->fill_host(1, expected);
    EXPECT_TRUE(second == expected);
}

// A tile of a page (one row of 64 KiB at its slot), into `destination`.
PageLoad tile_load(std::shared_ptr<const TileSource> source, std::uint64_t slot,
                   std::vector<std::byte>& destination, std::uint64_t tag) {
    constexpr std::uint64_t tile_bytes = 64u << 10;
    return {.source = std::move(source),
            .layout_page = 0,
            .destination = reinterpret_cast<DeviceAddress>(destination.data()),
            .tag = tag,
            .rows = PageRows{.row_bytes = tile_bytes,
                             .rows = 1,
                             .pitch = tile_bytes,
                             .source_offset = slot * tile_bytes}};
}

// Whether each destination holds its tile of the file's page 0 (slots 0, 1, ...).
bool tiles_are_the_files(const TileSource& file, const std::vector<std::vector<std::byte>>& tiles) {
    constexpr std::size_t tile_bytes = 64u << 10;
    std::vector<std::byte> page(page_bytes);
    file.fill_host(0, page);
    for (std::size_t i = 0; i < tiles.size(); ++i) {
        if (!std::equal(tiles[i].begin(), tiles[i].begin() + tile_bytes,
                        page.begin() + static_cast<std::ptrdiff_t>(i * tile_bytes))) {
            return false;
        }
    }
    return true;
}

// A tile asked for while its page is decoded to be kept waits for that page instead of reading
// it again: one read, one decode, both tiles the file's.
TEST_F(PageLoaderTest, ATileAskedForWhileItsPageIsDecodedWaitsForItInsteadOfReadingIt) {
    auto gated = std::make_shared<GatedDecodes>(source_);
    std::atomic<std::size_t> loaded{0};
    PageLoaderSettings s = settings();
    s.decoded_pages_kept = 4;
    s.on_loaded = [&](const PageLoadResult& result) {
        EXPECT_TRUE(result.ok) << result.tag;
        ++loaded;
    };
    std::vector<std::vector<std::byte>> tiles(2, std::vector<std::byte>(page_bytes));
    PageLoader loader(std::move(s));
    loader.load({tile_load(gated, 0, tiles[0], 1)});
    ASSERT_TRUE(gated->wait_running(1, 30s));
    loader.load({tile_load(gated, 1, tiles[1], 2)});
    gated->let_through(2);  // the second as well, were it decoded again
    for (int i = 0; i < 3000 && loaded.load() < 2; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(loaded.load(), 2u);
    const PageLoaderStatistics stats = loader.statistics();
    EXPECT_EQ(stats.reads.completed_ok, 1u) << "the page read once";
    EXPECT_EQ(stats.decoded_page_hits, 1u) << "the second tile copied from the page kept";
    EXPECT_EQ(gated->take_most(), 1u) << "decoded once";
    EXPECT_TRUE(tiles_are_the_files(*source_, tiles));
}

// A baked file whose first decode fails: the loads that waited for that page read it themselves.
class FirstDecodeFails final : public WatchedDecodes {
public:
    explicit FirstDecodeFails(std::shared_ptr<const TileSource> file)
        : WatchedDecodes(std::move(file), "first fails") {}

    void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                       std::span<std::byte> destination) const override {
        {
            std::unique_lock lock(mutex_);
            const bool first = decodes_++ == 0;
            changed_.notify_all();
            if (first) {
                changed_.wait(lock, [&] { return released_; });
                throw Error(Errc::corrupt_data, "FirstDecodeFails", "the first decode fails");
            }
        }
        WatchedDecodes::decode_stored(page, stored, destination);
    }
    bool wait_decoding(std::chrono::milliseconds limit) const {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, limit, [&] { return decodes_ > 0; });
    }
    void release() {
        {
            std::lock_guard lock(mutex_);
            released_ = true;
        }
        changed_.notify_all();
    }
    std::size_t decodes() const {
        std::lock_guard lock(mutex_);
        return decodes_;
    }

private:
    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    mutable std::size_t decodes_ = 0;
    bool released_ = false;
};

TEST_F(PageLoaderTest, ATileThatWaitedForAPageWhoseDecodeFailedReadsItItself) {
    auto failing = std::make_shared<FirstDecodeFails>(source_);
    std::mutex mutex;
    std::vector<PageLoadResult> results;
    PageLoaderSettings s = settings();
    s.decoded_pages_kept = 4;
    s.on_loaded = [&](const PageLoadResult& result) {
        std::lock_guard lock(mutex);
        results.push_back(result);
    };
    std::vector<std::vector<std::byte>> tiles(2, std::vector<std::byte>(page_bytes));
    PageLoader loader(std::move(s));
    loader.load({tile_load(failing, 0, tiles[0], 1)});
    ASSERT_TRUE(failing->wait_decoding(30s));
    loader.load({tile_load(failing, 1, tiles[1], 2)});
    failing->release();
    for (int i = 0; i < 3000 && loader.statistics().outstanding > 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    const PageLoaderStatistics stats = loader.statistics();
    EXPECT_EQ(stats.failed, 1u);
    EXPECT_EQ(stats.loaded, 1u);
    EXPECT_EQ(stats.reads.completed_ok, 2u) << "read again by the load that waited";
    EXPECT_EQ(stats.decoded_page_hits, 0u);
    EXPECT_EQ(failing->decodes(), 2u);
    std::lock_guard lock(mutex);
    ASSERT_EQ(results.size(), 2u);
    for (const PageLoadResult& result : results) EXPECT_EQ(result.ok, result.tag == 2);
    constexpr std::size_t tile_bytes = 64u << 10;
    std::vector<std::byte> page(page_bytes);
    source_->fill_host(0, page);
    EXPECT_TRUE(
        std::equal(tiles[1].begin(), tiles[1].begin() + tile_bytes, page.begin() + tile_bytes));
}

// Only the active decode threads take pages: the others stay parked until the count is raised,
// and those past a lowered count finish their page and park again.
class ActiveDecodeThreadsTest : public PageLoaderTest {
protected:
    static constexpr std::size_t pages = 8;

    void SetUp() override {
        PageLoaderTest::SetUp();
        gated_ = std::make_shared<GatedDecodes>(source_);
    }

    PageLoaderSettings gated_settings(std::size_t active) {
        PageLoaderSettings s = settings();
        s.decode_threads = 4;
        s.active_decode_threads = active;
        s.read_buffers = pages;
        s.reads.depth = pages;
        s.on_loaded = [this](const PageLoadResult& result) {
            EXPECT_TRUE(result.ok) << result.tag;
            ++loaded_;
        };
        return s;
    }

    // Page 0 `pages` times, each into a page of its own (decodes write them at once).
    std::vector<PageLoad> gated_loads() {
        std::vector<PageLoad> loads;
        for (std::size_t i = 0; i < pages; ++i) {
            loads.push_back({.source = gated_,
                             .layout_page = 0,
                             .destination = reinterpret_cast<DeviceAddress>(pages_[i].data()),
                             .tag = i});
        }
        return loads;
    }

    bool all_loaded() {
        for (int i = 0; i < 2000 && loaded_.load() < pages; ++i) std::this_thread::sleep_for(10ms);
        return loaded_.load() == pages;
    }

    std::shared_ptr<GatedDecodes> gated_;
    std::vector<std::vector<std::byte>> pages_ =
        std::vector<std::vector<std::byte>>(pages, std::vector<std::byte>(page_bytes));
    std::atomic<std::size_t> loaded_{0};
};

TEST_F(ActiveDecodeThreadsTest, RaisingTheCountUnparksThreadsAndLoweringItParksThem) {
    PageLoader loader(gated_settings(1));
    EXPECT_EQ(loader.statistics().decode_threads, 4u);
    EXPECT_EQ(loader.statistics().active_decode_threads, 1u);
    loader.load(gated_loads());
    ASSERT_TRUE(gated_->wait_running(1, 20s));
    // Seven pages read and waiting, four threads, one active: one decode at a time.
    for (int i = 0; i < 2000 && loader.statistics().decode_queue < pages - 1; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(loader.statistics().decode_queue, pages - 1);
    EXPECT_EQ(gated_->running(), 1u);

    loader.set_active_decode_threads(3);
    EXPECT_EQ(loader.statistics().active_decode_threads, 3u);
    ASSERT_TRUE(gated_->wait_running(3, 20s)) << gated_->running() << " decodes at once";
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(gated_->take_most(), 3u) << "the fourth thread stays parked";

    // Lowered while three decode: they finish, then one thread at a time takes pages.
    loader.set_active_decode_threads(1);
    gated_->let_through(3);
    for (int i = 0; i < 2000 && loaded_.load() < 3; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(gated_->wait_running(1, 20s));
    std::this_thread::sleep_for(50ms);
    gated_->take_most();
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(gated_->take_most(), 1u);
    gated_->let_through(pages);
    ASSERT_TRUE(all_loaded()) << loaded_.load();
    EXPECT_EQ(loader.statistics().loaded, pages);
}

TEST_F(ActiveDecodeThreadsTest, RefusesCountsOutsideThePool) {
    PageLoader loader(gated_settings(2));
    for (std::size_t count : {std::size_t(0), std::size_t(5)}) {
        try {
            loader.set_active_decode_threads(count);
            ADD_FAILURE() << count << " accepted";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::out_of_range) << error.what();
        }
    }
    EXPECT_EQ(loader.statistics().active_decode_threads, 2u);
    EXPECT_THROW(PageLoader(gated_settings(5)), Error) << "more active threads than started";
}

// Destroyed with threads parked, one blocked in its decode and pages waiting: it returns once
// that decode ends, reports that page only and leaves no thread behind.
TEST_F(ActiveDecodeThreadsTest, DestructionWhileThreadsAreParkedNeitherHangsNorLeaks) {
    const std::size_t threads_before = thread_count();
    {
        PageLoader idle(gated_settings(1));  // never loads: its parked threads just end
    }
    auto loader = std::make_unique<PageLoader>(gated_settings(1));
    loader->load(gated_loads());
    ASSERT_TRUE(gated_->wait_running(1, 20s));
    std::thread destroy([&] { loader.reset(); });
    std::this_thread::sleep_for(50ms);
    gated_->let_through(pages);
    destroy.join();
    // The page being decoded is reported, the waiting ones are dropped (on a machine slow enough
    // that the destructor had not begun after 50 ms, the thread may have decoded more first).
    EXPECT_GE(loaded_.load(), 1u);
    const std::size_t allowed = threads_before + test::sanitizer_runtime_threads;
    for (int i = 0; i < 200 && thread_count() > allowed; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_LE(thread_count(), allowed);
}

}  // namespace
}  // namespace vtpage::vt
