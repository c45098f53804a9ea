// The page loader on its own: stored pages read through its read queue into its read buffers and
// decoded by its threads -- what happens when a read outlasts the loader, and when no decode
// thread can have a stream on the device.
#include "streaming/streamer/page_loader.hpp"

#include <gtest/gtest.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

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

class PageLoaderTest : public testing::Test {
protected:
    void SetUp() override {
        path_ = folder_.file("image.vtex");
        test::write_rgba8_archive(test::make_test_image(900, 700, 5), path_);
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

}  // namespace
}  // namespace vtpage::vt
