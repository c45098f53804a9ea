// The GPU path: CUDA pages imported into Vulkan as OPAQUE_FD, and CUDA work ordered before
// Vulkan work through an exported timeline semaphore. Skipped, with the reason, where there is
// no CUDA device or no Vulkan driver for it.
#include <gtest/gtest.h>

#include <cstring>

#include "../support/backend_fixture.hpp"
#include "../support/open_descriptors.hpp"
#include "vtpage/config.hpp"
#include "vtpage/core/page_pool.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_cuda_timeline.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"
#include "vulkan_test_support.hpp"
#if VTPAGE_HAS_CUDA
#include "cuda_stream_helpers.hpp"
#endif

namespace vtpage {
namespace {

TEST(CudaVulkanTimeline, SaysWhyWhereSemaphoresCannotBeShared) {
    std::string reason;
    auto backend = test::try_make_backend("host", reason);
    ASSERT_TRUE(backend) << reason;
    VTPAGE_VULKAN_OR_SKIP(context, *backend);
    if (VTPAGE_HAS_CUDA && context->supports_semaphore_fd()) {
        GTEST_SKIP() << context->device_name() << " can share semaphores with CUDA: the GPU "
                     << "tests below cover it";
    }
    try {
        CudaVulkanTimeline timeline(*context);
        FAIL() << "a CUDA timeline was made without a way to share it";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::not_supported) << error.what();
    }
    test::expect_no_validation_messages(*context);
}

#if VTPAGE_HAS_CUDA

class CudaVulkanTest : public testing::Test {
protected:
    void SetUp() override {
        std::string reason;
        backend = test::try_make_backend("cuda", reason);
        if (!backend) GTEST_SKIP() << "cuda backend unavailable: " << reason;
        context = test::try_make_vulkan_context(*backend, reason);
        if (!context) GTEST_SKIP() << "no Vulkan device for the CUDA device: " << reason;
        ASSERT_EQ(test::cuda_stream_create(backend->capabilities().device, &stream), "cudaSuccess");
    }
    void TearDown() override {
        if (stream) {
            EXPECT_EQ(test::cuda_stream_destroy(stream), "cudaSuccess");
        }
        if (context) test::expect_no_validation_messages(*context);
    }
    std::unique_ptr<Backend> backend;
    std::unique_ptr<VulkanContext> context;
    CUstream_st* stream = nullptr;
};

TEST_F(CudaVulkanTest, PagesImportedAsOpaqueFdsReadWhatCudaWrote) {
    const std::size_t fds_before = test::open_descriptor_count();
    {
        VulkanPageImporter importer(*context, *backend);
        EXPECT_EQ(importer.method(), PageImportMethod::opaque_fd);
        PagePoolSettings settings;
        settings.map_windows = true;
        settings.window_pages = 16;
        settings.release_threshold = 0;
        importer.attach(settings);
        PagePool pool(*backend, settings);
        auto pages = pool.acquire(3);
        EXPECT_EQ(importer.imported_count(), 3u);
        const std::size_t words = pool.page_size() / 4;
        for (const PooledPage& page : pages) {
            std::vector<std::uint32_t> pattern(words);
            for (std::size_t i = 0; i < words; ++i) pattern[i] = page.slot * 1000003u + i;
            backend->write(page.window, pattern.data(), pool.page_size());
        }
        for (const PooledPage& page : pages) {
            auto bytes =
                test::read_buffer(*context, importer.find(page.slot)->buffer, 0, pool.page_size());
            const auto* seen = reinterpret_cast<const std::uint32_t*>(bytes.data());
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < words; ++i) wrong += seen[i] != page.slot * 1000003u + i;
            EXPECT_EQ(wrong, 0u) << "slot " << page.slot;
        }
        pool.release(pages);  // destroyed (threshold 0): the imports go, and their fds
        EXPECT_EQ(importer.imported_count(), 0u);
    }
    EXPECT_EQ(test::open_descriptor_count(), fds_before)
        << "every exported fd was taken by an import and freed";
    EXPECT_EQ(backend->live_resources().pages, 0u);
}

TEST_F(CudaVulkanTest, VulkanWaitsForWhatCudaEnqueuedBeforeTheSignal) {
    CudaVulkanTimeline fills(*context, backend->capabilities().device);
    const std::size_t bytes = 2_MiB;
    const DeviceAddress address = backend->reserve(bytes);
    const PhysicalHandle page = backend->create(bytes);
    backend->map(address, bytes, page);
    backend->set_access(address, bytes, Access::read_write);
    std::vector<std::uint32_t> old_words(bytes / 4, 0x01010101u);
    backend->write(address, old_words.data(), bytes);
    VulkanPageImporter importer(*context, *backend);
    importer.import_page(PooledPage{page, 0, 0});

    void* pinned = nullptr;
    ASSERT_EQ(test::cuda_host_alloc(&pinned, bytes), "cudaSuccess");
    std::memset(pinned, 0x7e, bytes);
    // The copy lands 200 ms after it is enqueued; the Vulkan copy is submitted at once.
    ASSERT_EQ(test::cuda_spin(stream, 200), "cudaSuccess");
    ASSERT_EQ(test::cuda_copy_to_device_async(address, pinned, bytes, stream), "cudaSuccess");
    const std::uint64_t value = fills.signal(stream);
    EXPECT_EQ(value, 1u);
    EXPECT_EQ(fills.last_signaled(), 1u);

    VulkanBuffer readback(*context, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                          BufferMemory::readback);
    VulkanTimeline done(*context);
    const UniqueVkCommandPool command_pool = test::make_command_pool(*context);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = command_pool.get();
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer commands = VK_NULL_HANDLE;
    ASSERT_EQ(vkAllocateCommandBuffers(context->device(), &allocate, &commands), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    ASSERT_EQ(vkBeginCommandBuffer(commands, &begin), VK_SUCCESS);
    VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(commands, importer.find(0)->buffer, readback.get(), 1, &region);
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    ASSERT_EQ(vkEndCommandBuffer(commands), VK_SUCCESS);
    VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait.semaphore = fills.semaphore();
    wait.value = value;
    wait.stageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
    VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    signal.semaphore = done.get();
    signal.value = 1;
    signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkCommandBufferSubmitInfo buffer_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    buffer_info.commandBuffer = commands;
    VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submit.waitSemaphoreInfoCount = 1;
    submit.pWaitSemaphoreInfos = &wait;
    submit.commandBufferInfoCount = 1;
    submit.pCommandBufferInfos = &buffer_info;
    submit.signalSemaphoreInfoCount = 1;
    submit.pSignalSemaphoreInfos = &signal;
    context->submit(submit);
    // 50 ms in, CUDA is still spinning: the Vulkan copy must still be waiting.
    EXPECT_FALSE(done.wait(1, 50'000'000)) << "the Vulkan copy ran before CUDA signalled";
    ASSERT_TRUE(done.wait(1, 10'000'000'000ull));
    EXPECT_GE(fills.timeline().value(), value);
    readback.invalidate();
    const auto* seen = static_cast<const std::uint8_t*>(static_cast<void*>(readback.mapped()));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < bytes; ++i) wrong += seen[i] != 0x7e;
    EXPECT_EQ(wrong, 0u) << "Vulkan read the page before CUDA's copy landed";

    ASSERT_EQ(test::cuda_stream_synchronize(stream), "cudaSuccess");
    ASSERT_EQ(test::cuda_host_free(pinned), "cudaSuccess");
    importer.forget_page(PooledPage{page, 0, 0});
    backend->unmap(address, bytes);
    backend->release(page);
    backend->free_reservation(address, bytes);
}

TEST_F(CudaVulkanTest, ValuesSignalledFromTwoStreamsCompleteInOrder) {
    CudaVulkanTimeline fills(*context, backend->capabilities().device);
    CUstream_st* other = nullptr;
    ASSERT_EQ(test::cuda_stream_create(backend->capabilities().device, &other), "cudaSuccess");
    const std::size_t bytes = 2_MiB;
    const DeviceAddress address = backend->reserve(2 * bytes);
    PhysicalHandle pages[2] = {backend->create(bytes), backend->create(bytes)};
    std::vector<std::uint8_t> old_bytes(bytes, 0x01);
    void* pinned = nullptr;
    ASSERT_EQ(test::cuda_host_alloc(&pinned, 2 * bytes), "cudaSuccess");
    for (int i = 0; i < 2; ++i) {
        backend->map(address + i * bytes, bytes, pages[i]);
        backend->set_access(address + i * bytes, bytes, Access::read_write);
        backend->write(address + i * bytes, old_bytes.data(), bytes);
        std::memset(static_cast<std::uint8_t*>(pinned) + i * bytes, 0x50 + i, bytes);
    }
    // Value 1: a slow copy on one stream. Value 2: a quick copy on the other, signalled first
    // in time unless signal() orders it after value 1.
    ASSERT_EQ(test::cuda_spin(stream, 200), "cudaSuccess");
    ASSERT_EQ(test::cuda_copy_to_device_async(address, pinned, bytes, stream), "cudaSuccess");
    EXPECT_EQ(fills.signal(stream), 1u);
    ASSERT_EQ(test::cuda_copy_to_device_async(
                  address + bytes, static_cast<std::uint8_t*>(pinned) + bytes, bytes, other),
              "cudaSuccess");
    EXPECT_EQ(fills.signal(other), 2u);
    // Waiting for 2 on the host: both copies must have landed.
    EXPECT_TRUE(fills.timeline().wait(2, 10'000'000'000ull));
    for (int i = 0; i < 2; ++i) {
        std::vector<std::uint8_t> seen(bytes);
        backend->read(seen.data(), address + i * bytes, bytes);
        EXPECT_EQ(seen[0], 0x50 + i) << "page " << i;
        EXPECT_EQ(seen[bytes - 1], 0x50 + i) << "page " << i;
    }
    ASSERT_EQ(test::cuda_stream_synchronize(stream), "cudaSuccess");
    ASSERT_EQ(test::cuda_stream_synchronize(other), "cudaSuccess");
    EXPECT_EQ(test::cuda_stream_destroy(other), "cudaSuccess");
    ASSERT_EQ(test::cuda_host_free(pinned), "cudaSuccess");
    backend->unmap(address, 2 * bytes);
    for (PhysicalHandle page : pages) backend->release(page);
    backend->free_reservation(address, 2 * bytes);
}

#endif  // VTPAGE_HAS_CUDA

}  // namespace
}  // namespace vtpage
