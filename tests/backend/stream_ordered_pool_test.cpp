// Stream-ordered pools on every backend: the same statistics vocabulary as the page pool
// (reserved / used, current / high, release threshold), the reuse policies read back, and on
// CUDA an explicit cudaMemPool_t shared with another process through an fd.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "../support/backend_fixture.hpp"
#include "../support/child_process.hpp"
#include "../support/expect_error.hpp"
#include "vtpage/backend/stream_ordered_pool.hpp"
#include "vtpage/config.hpp"
#if VTPAGE_HAS_CUDA
#include "../support/gpu_kernels.hpp"
#endif

namespace vtpage {
namespace {

class StreamOrderedPoolTest : public test::BackendTest {
protected:
    std::unique_ptr<StreamOrderedPool> make(StreamPoolSettings settings = {}) {
        settings.log = Log(silent_log());
        return make_stream_ordered_pool(*backend_, std::move(settings));
    }
};

TEST_P(StreamOrderedPoolTest, StatisticsFollowAllocationsAndFrees) {
    auto pool = make();
    EXPECT_EQ(pool->backend_name(), GetParam());
    auto before = pool->statistics();
    EXPECT_EQ(before.used_bytes, 0u);
    EXPECT_EQ(before.release_threshold, SIZE_MAX);
    std::vector<DeviceAddress> buffers;
    for (int i = 0; i < 3; ++i) buffers.push_back(pool->allocate(1_MiB));
    pool->synchronize();
    auto busy = pool->statistics();
    EXPECT_GE(busy.used_bytes, 3 * 1_MiB);
    EXPECT_GE(busy.reserved_bytes, busy.used_bytes);
    EXPECT_GE(busy.used_bytes_high, busy.used_bytes);
    EXPECT_GE(busy.reserved_bytes_high, busy.reserved_bytes);
    EXPECT_EQ(busy.live_allocations, 3u);
    EXPECT_EQ(busy.allocations, 3u);
    for (DeviceAddress buffer : buffers) pool->free(buffer);
    pool->synchronize();
    auto idle = pool->statistics();
    EXPECT_EQ(idle.used_bytes, 0u);
    EXPECT_EQ(idle.live_allocations, 0u);
    EXPECT_EQ(idle.frees, 3u);
    // The threshold keeps everything: the memory stays reserved for the next allocations.
    EXPECT_GE(idle.reserved_bytes, 3 * 1_MiB);
    EXPECT_GE(idle.used_bytes_high, 3 * 1_MiB);
    // A reused allocation does not grow the pool.
    DeviceAddress again = pool->allocate(1_MiB);
    pool->synchronize();
    EXPECT_EQ(pool->statistics().reserved_bytes, idle.reserved_bytes);
    pool->free(again);
    pool->reset_highs();
    pool->synchronize();
    auto reset = pool->statistics();
    EXPECT_EQ(reset.used_bytes_high, reset.used_bytes);
    EXPECT_EQ(reset.reserved_bytes_high, reset.reserved_bytes);
}

TEST_P(StreamOrderedPoolTest, TheReleaseThresholdHoldsAtTrimPoints) {
    auto pool = make({.release_threshold = 0});
    DeviceAddress buffer = pool->allocate(4_MiB);
    pool->synchronize();
    EXPECT_GE(pool->statistics().reserved_bytes, 4_MiB);
    pool->free(buffer);
    pool->synchronize();  // a trim point: nothing is kept above a threshold of 0
    EXPECT_EQ(pool->statistics().reserved_bytes, 0u);
    EXPECT_GE(pool->statistics().reserved_bytes_high, 4_MiB);

    pool->set_release_threshold(SIZE_MAX);
    EXPECT_EQ(pool->statistics().release_threshold, SIZE_MAX);
    pool->free(pool->allocate(4_MiB));
    pool->synchronize();
    EXPECT_GE(pool->statistics().reserved_bytes, 4_MiB);
    pool->trim_to(0);
    EXPECT_EQ(pool->statistics().reserved_bytes, 0u);
}

TEST_P(StreamOrderedPoolTest, ReusePoliciesAreAppliedAndReadBack) {
    auto defaults = make()->statistics();
    EXPECT_TRUE(defaults.reuse_follow_event_dependencies);
    EXPECT_TRUE(defaults.reuse_allow_opportunistic);
    EXPECT_TRUE(defaults.reuse_allow_internal_dependencies);
    auto strict = make({.reuse_follow_event_dependencies = false,
                        .reuse_allow_opportunistic = false,
                        .reuse_allow_internal_dependencies = false})
                      ->statistics();
    EXPECT_FALSE(strict.reuse_follow_event_dependencies);
    EXPECT_FALSE(strict.reuse_allow_opportunistic);
    EXPECT_FALSE(strict.reuse_allow_internal_dependencies);
    auto mixed = make({.reuse_allow_opportunistic = false})->statistics();
    EXPECT_TRUE(mixed.reuse_follow_event_dependencies);
    EXPECT_FALSE(mixed.reuse_allow_opportunistic);
}

TEST_P(StreamOrderedPoolTest, MaxSizeLimitsThePool) {
    auto pool = make({.max_size = 64_MiB});
    EXPECT_ERRC(pool->allocate(256_MiB), Errc::out_of_memory);
    DeviceAddress fits = pool->allocate(1_MiB);
    pool->free(fits);
    pool->synchronize();
}

TEST_P(StreamOrderedPoolTest, RefusesWhatItCannotDo) {
    auto pool = make();
    EXPECT_ERRC(pool->allocate(0), Errc::invalid_argument);
    DeviceAddress buffer = pool->allocate(4096);
    EXPECT_ERRC(pool->free(buffer + 256), Errc::invalid_argument);
    pool->free(buffer);
    EXPECT_ERRC(pool->free(buffer), Errc::invalid_argument);
    EXPECT_ERRC(pool->export_fd(), Errc::not_supported);  // made without ipc
    EXPECT_ERRC(make({.device = 99}), Errc::invalid_argument);
    pool->synchronize();
}

TEST_P(StreamOrderedPoolTest, AllocationsHoldData) {
    auto pool = make();
    const std::size_t words = 1 << 18;
    DeviceAddress buffer = pool->allocate(words * 4);
    pool->synchronize();
    if (GetParam() == "host") {
        auto* data = reinterpret_cast<std::uint32_t*>(buffer);
        std::iota(data, data + words, 1u);
        EXPECT_EQ(std::accumulate(data, data + words, std::uint64_t(0)),
                  std::uint64_t(words) * (words + 1) / 2);
    } else {
#if VTPAGE_HAS_CUDA
        EXPECT_EQ(test::gpu_fill_words(buffer, words, 3), "cudaSuccess");
        std::uint64_t sum = 0;
        EXPECT_EQ(test::gpu_sum_words(buffer, words, sum), "cudaSuccess");
        EXPECT_EQ(sum, 3u * words);
#endif
    }
    pool->free(buffer);
    pool->synchronize();
}

TEST_P(StreamOrderedPoolTest, PinnedHostStagingIsReachableFromCpuAndDevice) {
    std::unique_ptr<StreamOrderedPool> pool;
    try {
        pool = make({.location = StreamPoolLocation::host});
    } catch (const Error& error) {
        if (error.code() != Errc::not_supported) throw;
        GTEST_SKIP() << "no pinned host pools here: " << error.what();
    }
    EXPECT_EQ(pool->statistics().location, StreamPoolLocation::host);
    const std::size_t words = 1 << 16;
    DeviceAddress buffer = pool->allocate(words * 4);
    pool->synchronize();
    auto* data = reinterpret_cast<std::uint32_t*>(buffer);
    std::fill(data, data + words, 5u);  // the CPU writes it...
    if (GetParam() == "cuda") {
#if VTPAGE_HAS_CUDA
        std::uint64_t sum = 0;  // ... and a kernel reads it
        EXPECT_EQ(test::gpu_sum_words(buffer, words, sum), "cudaSuccess");
        EXPECT_EQ(sum, 5u * words);
#endif
    }
    pool->free(buffer);
    pool->synchronize();
}

#if VTPAGE_HAS_CUDA
// Imports the pool on descriptor 3 and the allocation given as 128 hex digits, sums its words
// with a kernel and prints the sum.
int import_pool_child(const std::vector<std::string>& arguments) {
    std::string reason;
    auto backend = test::try_make_backend("cuda", reason);
    if (!backend) return 2;
    StreamPoolShareData share;
    const std::string& hex = arguments.at(0);
    for (std::size_t i = 0; i < share.bytes.size(); ++i) {
        share.bytes[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    }
    const std::size_t words = std::stoul(arguments.at(1));
    auto pool = import_stream_ordered_pool(*backend, 3);
    DeviceAddress buffer = pool->import_allocation(share);
    std::uint64_t sum = 0;
    std::string result = test::gpu_sum_words(buffer, words, sum);
    pool->free(buffer);
    pool->synchronize();
    std::printf("import: %s sum=%llu\n", result.c_str(), static_cast<unsigned long long>(sum));
    return 0;
}
VTPAGE_CHILD_MODE("import-stream-pool", import_pool_child);
#endif

TEST_P(StreamOrderedPoolTest, AnIpcPoolIsSharedWithAnotherProcess) {
    if (GetParam() == "host") {
        EXPECT_ERRC(make({.ipc = true}), Errc::not_supported);
        return;
    }
#if VTPAGE_HAS_CUDA
    std::unique_ptr<StreamOrderedPool> pool;
    try {
        pool = make({.ipc = true});
    } catch (const Error& error) {
        if (error.code() != Errc::not_supported) throw;
        GTEST_SKIP() << "no IPC pools here: " << error.what();
    }
    EXPECT_TRUE(pool->statistics().ipc);
    const std::size_t words = 1 << 18;
    DeviceAddress buffer = pool->allocate(words * 4);
    ASSERT_EQ(test::gpu_fill_words(buffer, words, 7), "cudaSuccess");  // and waits
    UniqueFd fd = pool->export_fd();
    StreamPoolShareData share = pool->export_allocation(buffer);
    std::string hex;
    for (std::uint8_t byte : share.bytes) {
        char digits[3];
        std::snprintf(digits, sizeof(digits), "%02x", byte);
        hex += digits;
    }
    auto child = test::ChildProcess("import-stream-pool", {hex, std::to_string(words)}, fd.get());
    auto result = child.wait(60);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("import: cudaSuccess sum=" + std::to_string(7 * words)),
              std::string::npos)
        << result.output;
    pool->free(buffer);
    pool->synchronize();
#endif
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamOrderedPoolTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage
