// The CUDA backend with several GPUs: pages placed on a chosen device, one region's pages
// reachable from a list of devices with one access descriptor each. The tests that need two
// GPUs skip, with the reason, on machines with one.
#include <gtest/gtest.h>

#include <thread>

#include "../support/backend_fixture.hpp"
#include "../support/expect_error.hpp"
#include "vtpage/config.hpp"
#include "vtpage/core/page_table.hpp"
#if VTPAGE_HAS_CUDA
#include "../support/gpu_kernels.hpp"
#include "vtpage/backend/cuda_backend.hpp"
#endif

namespace vtpage {
namespace {

#if VTPAGE_HAS_CUDA

class CudaDevices : public testing::Test {
protected:
    void SetUp() override {
        std::string reason;
        backend_ = test::try_make_backend("cuda", reason);
        if (!backend_) GTEST_SKIP() << "cuda backend unavailable: " << reason;
        cuda_ = dynamic_cast<CudaBackend*>(backend_.get());
        ASSERT_NE(cuda_, nullptr);
        page_ = backend_->granularity().minimum;
        count_ = backend_->capabilities().device_count;
    }
    // Skips unless the machine has two GPUs with virtual memory management.
    bool two_devices(std::string& reason) const {
        if (count_ < 2) {
            reason =
                "this machine has " + std::to_string(count_) + " CUDA device(s); the test needs 2";
            return false;
        }
        if (!cuda_->supports_virtual_memory(1)) {
            reason = "device 1 has no virtual memory management";
            return false;
        }
        return true;
    }
    bool peers(std::string& reason) const {
        if (!two_devices(reason)) return false;
        if (!cuda_->can_access_peer(0, 1) || !cuda_->can_access_peer(1, 0)) {
            reason = "devices 0 and 1 cannot access each other's memory (no peer access)";
            return false;
        }
        return true;
    }

    std::unique_ptr<Backend> backend_;
    CudaBackend* cuda_ = nullptr;
    std::size_t page_ = 0;
    int count_ = 0;
};

#define NEEDS(condition)                  \
    do {                                  \
        std::string needs_reason;         \
        if (!(condition(needs_reason))) { \
            GTEST_SKIP() << needs_reason; \
        }                                 \
    } while (0)

TEST_F(CudaDevices, RefusesDevicesThatDoNotExistOrRepeat) {
    EXPECT_ERRC(backend_->create(page_, PageOptions{count_, true, false}), Errc::invalid_argument);
    EXPECT_ERRC(backend_->create(page_, PageOptions{-2, true, false}), Errc::invalid_argument);
    DeviceAddress address = backend_->reserve(page_);
    PhysicalHandle handle = backend_->create(page_, PageOptions{0, true, false});
    EXPECT_EQ(cuda_->device_of(handle), 0);
    backend_->map(address, page_, handle);
    DeviceAccess missing[] = {{count_, Access::read_write}};
    EXPECT_ERRC(backend_->set_access(address, page_, missing), Errc::invalid_argument);
    DeviceAccess twice[] = {{0, Access::read_write}, {0, Access::read}};
    EXPECT_ERRC(backend_->set_access(address, page_, twice), Errc::invalid_argument);
    backend_->set_access(address, page_, Access::read_write);
    backend_->unmap(address, page_);
    backend_->release(handle);
    backend_->free_reservation(address, page_);
    EXPECT_TRUE(cuda_->can_access_peer(0, 0));
    EXPECT_FALSE(cuda_->can_access_peer(0, count_));
}

TEST_F(CudaDevices, PagesLandOnTheDeviceAsked) {
    NEEDS(two_devices);
    cuda_->memory_info(1);  // retains device 1's context first: its memory is not the pages'
    const MemoryInfo before0 = cuda_->memory_info(0), before1 = cuda_->memory_info(1);
    std::vector<PhysicalHandle> pages;
    for (int i = 0; i < 32; ++i)
        pages.push_back(backend_->create(page_, PageOptions{1, true, false}));
    const MemoryInfo during0 = cuda_->memory_info(0), during1 = cuda_->memory_info(1);
    EXPECT_GE(before1.free - during1.free, 32 * page_);
    EXPECT_LT(before0.free > during0.free ? before0.free - during0.free : 0, 16 * page_);
    for (PhysicalHandle page : pages) EXPECT_EQ(cuda_->device_of(page), 1);
    for (PhysicalHandle page : pages) backend_->release(page);
    const MemoryInfo after1 = cuda_->memory_info(1);
    EXPECT_GE(after1.free + 4 * page_, before1.free);
}

TEST_F(CudaDevices, ARegionAcrossDevicesIsReachableFromEachWithOneCall) {
    NEEDS(peers);
    const std::size_t pages = 8;
    DeviceAddress base = backend_->reserve(pages * page_);
    std::vector<PhysicalHandle> handles;
    for (std::size_t i = 0; i < pages; ++i) {
        handles.push_back(backend_->create(page_, PageOptions{int(i % 2), true, false}));
        backend_->map(base + i * page_, page_, handles.back());
    }
    // One call, one descriptor per device, over pages that live on both.
    DeviceAccess both[] = {{0, Access::read_write}, {1, Access::read_write}};
    backend_->set_access(base, pages * page_, both);
    const std::size_t words = pages * page_ / 4;
    EXPECT_EQ(test::gpu_fill_words_on(1, base, words, 5), "cudaSuccess");
    std::uint64_t sum = 0;
    EXPECT_EQ(test::gpu_sum_words_on(0, base, words, sum), "cudaSuccess");
    EXPECT_EQ(sum, 5u * words);
    std::vector<std::uint32_t> back(page_ / 4);
    backend_->read(back.data(), base + page_, page_);  // device 0 reads a device-1 page
    EXPECT_EQ(back.front(), 5u);
    EXPECT_EQ(back.back(), 5u);
    backend_->unmap(base, pages * page_);
    for (PhysicalHandle handle : handles) backend_->release(handle);
    backend_->free_reservation(base, pages * page_);
}

TEST_F(CudaDevices, AccessForAnotherDeviceOnlyKeepsThisOneOut) {
    NEEDS(peers);
    DeviceAddress address = backend_->reserve(page_);
    PhysicalHandle handle = backend_->create(page_, PageOptions{0, true, false});
    backend_->map(address, page_, handle);
    DeviceAccess only_one[] = {{1, Access::read_write}};
    backend_->set_access(address, page_, only_one);
    std::uint32_t word = 0;
    EXPECT_ERRC(backend_->read(&word, address, 4), Errc::access_denied);
    EXPECT_EQ(test::gpu_fill_words_on(1, address, page_ / 4, 9), "cudaSuccess");
    backend_->set_access(address, page_, Access::read);
    backend_->read(&word, address, 4);
    EXPECT_EQ(word, 9u);
    backend_->unmap(address, page_);
    backend_->release(handle);
    backend_->free_reservation(address, page_);
}

TEST_F(CudaDevices, APageTableCanKeepItsPagesOnAnotherDevice) {
    NEEDS(peers);
    PageTableSettings settings;
    settings.region_size = 64 * page_;
    settings.budget_bytes = 8 * page_;
    settings.pool.page_options.device = 1;
    settings.access = {{0, Access::read_write}, {1, Access::read_write}};
    PageTable table(*backend_, settings);
    auto mappings = table.commit(std::vector<PageIndex>{0, 1, 2, 3});
    for (const auto& mapping : mappings) EXPECT_EQ(cuda_->device_of(mapping.physical.handle), 1);
    std::vector<std::uint32_t> words(page_ / 4, 11);
    backend_->write(table.address_of(2), words.data(), page_);  // through device 0
    std::uint64_t sum = 0;
    EXPECT_EQ(test::gpu_sum_words_on(1, table.address_of(2), page_ / 4, sum), "cudaSuccess");
    EXPECT_EQ(sum, 11u * (page_ / 4));
    table.check_invariants();
}

TEST_F(CudaDevices, ADeviceWithoutPeerAccessIsRefusedWithTheReason) {
    NEEDS(two_devices);
    if (cuda_->can_access_peer(1, 0)) {
        GTEST_SKIP() << "device 1 can access device 0 here; nothing to refuse";
    }
    DeviceAddress address = backend_->reserve(page_);
    PhysicalHandle handle = backend_->create(page_, PageOptions{0, true, false});
    backend_->map(address, page_, handle);
    DeviceAccess both[] = {{0, Access::read_write}, {1, Access::read_write}};
    EXPECT_ERRC(backend_->set_access(address, page_, both), Errc::not_supported);
    backend_->unmap(address, page_);
    backend_->release(handle);
    backend_->free_reservation(address, page_);
}

#else

TEST(CudaDevices, NeedTheCudaBuild) {
    GTEST_SKIP() << "this build has no CUDA compiler, so no CUDA backend";
}

#endif

}  // namespace
}  // namespace vtpage
