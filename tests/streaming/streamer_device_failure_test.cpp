// A device batch whose end fails (the CUDA event that would say when it is done cannot be
// recorded) still has its fills enqueued on the worker's stream. Its pages are failed, unpinned
// and their physical pages reused at once: the streamer must wait for that device work first,
// or a late fill writes the failed texture's bytes over the page that now holds another's.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "../support/test_point_handler.hpp"
#include "streaming_test_support.hpp"
#include "vtpage/config.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"
#if VTPAGE_HAS_CUDA
#include "../support/gpu_kernels.hpp"
#endif

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t words_per_page = page_bytes / 4;

// Every word of every page is `value`. On the device, each page's fill is enqueued after a
// host function that sleeps `device_delay` on the stream: the fill lands that long after the
// batch ends.
class ConstantSource final : public TileSource {
public:
    ConstantSource(std::uint32_t value, bool on_device, std::chrono::milliseconds device_delay)
        : value_(value), on_device_(on_device), device_delay_(device_delay) {}
    TextureShape shape() const noexcept override { return TextureShape::square(11); }
    std::string name() const override { return "constant " + std::to_string(value_); }
    void fill_host(std::uint64_t, std::span<std::byte> destination) const override {
        auto* words = reinterpret_cast<std::uint32_t*>(destination.data());
        std::fill(words, words + destination.size() / 4, value_);
    }
    bool fills_device() const noexcept override { return on_device_; }
    void fill_device(std::span<const DevicePageFill> fills,
                     DeviceFillContext& context) const override {
#if VTPAGE_HAS_CUDA
        for (const DevicePageFill& fill : fills) {
            const std::string delayed = test::gpu_delay_stream(
                context.stream(), static_cast<unsigned>(device_delay_.count()));
            const std::string launched = test::gpu_fill_words_async(
                context.stream(), fill.destination, words_per_page, value_);
            if (delayed != "cudaSuccess" || launched != "cudaSuccess") {
                throw Error(Errc::backend_failure, "ConstantSource", delayed + ", " + launched);
            }
        }
#else
        (void)fills;
        (void)context;
#endif
    }

private:
    std::uint32_t value_;
    bool on_device_;
    std::chrono::milliseconds device_delay_;
};

constexpr std::uint32_t late = 0xa5a5a5a5u, reused = 0x5a5a5a5au;

class StreamerDeviceFailureTest : public test::BackendTest {
protected:
    void TearDown() override { expect_baseline_resources("the streamer leaked"); }
    // A batch of one page of a texture whose device fills land 300 ms late fails at its end;
    // then a page of a host-filled texture takes the failed page's memory (the only free page).
    // `sum` is that page's words added up once the device is idle.
    // Unused in builds without CUDA, where both tests skip.
    [[maybe_unused]] void fail_a_batch_then_reuse_its_page(std::uint64_t& sum);
};

// The failed page's physical page is given to another texture's page, filled on the host; once
// the device is idle it holds that texture's bytes, not the late fill's.
TEST_P(StreamerDeviceFailureTest, AFailedBatchsDeviceWorkEndsBeforeItsPagesAreReused) {
#if VTPAGE_HAS_CUDA
    if (GetParam() != "cuda") GTEST_SKIP() << "device fills are the CUDA backend's";
    if (!device_fills_built()) GTEST_SKIP() << "built without CUDA device fills";
    if (!detail::test_points_built) GTEST_SKIP() << "built without VTPAGE_TEST_POINTS";
    std::uint64_t sum = 0;
    ASSERT_NO_FATAL_FAILURE(fail_a_batch_then_reuse_its_page(sum));
    EXPECT_EQ(sum, std::uint64_t(reused) * words_per_page)
        << "the failed batch's late fill wrote over the page that reused its memory (every word "
        << (sum == std::uint64_t(late) * words_per_page ? "the failed texture's)" : "mixed)");
#else
    GTEST_SKIP() << "built without CUDA";
#endif
}

// The same with the wait for the failed batch's device work left out (the defect's switch):
// the check above sees the late fill's bytes, so it would catch the defect.
TEST_P(StreamerDeviceFailureTest, WithoutTheWaitTheLateFillIsSeen) {
#if VTPAGE_HAS_CUDA
    if (GetParam() != "cuda") GTEST_SKIP() << "device fills are the CUDA backend's";
    if (!device_fills_built()) GTEST_SKIP() << "built without CUDA device fills";
    if (!detail::test_points_built) GTEST_SKIP() << "built without VTPAGE_TEST_POINTS";
    const test::TestSwitchesGuard defect({"defect.failed_device_batch_not_waited"});
    std::uint64_t sum = 0;
    ASSERT_NO_FATAL_FAILURE(fail_a_batch_then_reuse_its_page(sum));
    EXPECT_EQ(sum, std::uint64_t(late) * words_per_page);
#else
    GTEST_SKIP() << "built without CUDA";
#endif
}

void StreamerDeviceFailureTest::fail_a_batch_then_reuse_its_page(std::uint64_t& sum) {
#if VTPAGE_HAS_CUDA
    StreamerSettings s = test::streamer_test_settings(16);
    s.queue_events = true;
    s.worker_threads = 1;
    // As a Vulkan app streams: pages written through the pool's windows, which stay mapped
    // when a page is released, so a late write lands in whatever page holds that memory next.
    s.table.map_into_region = false;
    s.table.pool.map_windows = true;
    Streamer streamer(*backend_, s);
    const TextureId failing =
        streamer.add_texture(std::make_shared<ConstantSource>(late, true, 300ms));
    const TextureId other =
        streamer.add_texture(std::make_shared<ConstantSource>(reused, false, 0ms));
    // One page beyond the tails' (as many as they were committed to: they may share pages):
    // the failed page's memory is the only one left for the next page.
    std::set<PageIndex> tail_pages;
    for (const StreamerEvent& event : streamer.poll_events()) {
        if (event.kind == StreamerEventKind::committed) tail_pages.insert(event.page.table_page);
    }
    ASSERT_FALSE(tail_pages.empty());
    streamer.set_budget((tail_pages.size() + 1) * page_bytes);
    const PageIndex failed_page = streamer.textures().base_page(failing);
    const PageIndex next_page = streamer.textures().base_page(other);
    ASSERT_GT(streamer.textures().info(failing).layout.page_count, 1u) << "page 0 is the tail";

    {
        std::atomic<bool> armed{true};
        test::TestPointHandlerGuard fail_once([&](std::string_view point) {
            if (point != "device_fill.end_batch" || !armed.exchange(false)) return;
            throw Error(Errc::backend_failure, "test", "the batch's end is made to fail");
        });
        streamer.request(std::span(&failed_page, 1));
        ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    }
    const std::exception_ptr error = streamer.take_error();
    ASSERT_TRUE(error) << "the batch's end did not fail";
    EXPECT_FALSE(streamer.is_ready(failed_page));
    std::optional<PooledPage> failed_memory;
    for (const StreamerEvent& event : streamer.poll_events()) {
        if (event.kind == StreamerEventKind::committed && event.page.page == failed_page) {
            failed_memory = event.page.physical;
        }
    }
    ASSERT_TRUE(failed_memory) << "the failed page was never committed";

    streamer.request(std::span(&next_page, 1));
    ASSERT_TRUE(streamer.wait_idle_while_progressing(60s));
    streamer.rethrow_error();
    const std::optional<StreamedPage> ready = streamer.ready_page(next_page);
    ASSERT_TRUE(ready);
    ASSERT_EQ(ready->physical.slot, failed_memory->slot)
        << "the next page did not reuse the failed page's memory: nothing to check";
    // Whatever the device still had queued has run by now.
    std::this_thread::sleep_for(400ms);
    backend_->synchronize();
    ASSERT_EQ(test::gpu_sum_words(ready->data, words_per_page, sum), "cudaSuccess");
#else
    (void)sum;
#endif
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamerDeviceFailureTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage::vt
