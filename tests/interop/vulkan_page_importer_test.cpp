// Pool pages in Vulkan: imported once when created, forgotten when destroyed, and the imported
// buffer is the page's memory (what the CPU writes, the GPU reads, and back).
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "vtpage/backend/fault_injecting_backend.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/core/page_pool.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

constexpr std::size_t page_bytes = 2_MiB;

void fill_words(void* memory, std::uint32_t seed) {
    auto* words = static_cast<std::uint32_t*>(memory);
    for (std::size_t i = 0; i < page_bytes / 4; ++i)
        words[i] = seed * 2654435761u + std::uint32_t(i);
}

std::uint32_t expected_word(std::uint32_t seed, std::size_t i) {
    return seed * 2654435761u + std::uint32_t(i);
}

// The page as the GPU sees it through its import.
std::vector<std::uint32_t> gpu_words(VulkanContext& context, const VulkanPageImporter& importer,
                                     std::uint32_t slot) {
    auto page = importer.find(slot);
    EXPECT_TRUE(page.has_value());
    if (!page) return {};
    auto bytes = test::read_buffer(context, page->buffer, 0, page_bytes);
    std::vector<std::uint32_t> words(page_bytes / 4);
    std::memcpy(words.data(), bytes.data(), page_bytes);
    return words;
}

TEST(VulkanPageImporter, ImportsEachPoolPageOnceThroughItsWindow) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    EXPECT_EQ(importer.method(), PageImportMethod::host_pointer);
    EXPECT_EQ(importer.page_size(), page_bytes);
    PagePoolSettings settings;
    settings.map_windows = true;
    settings.window_pages = 64;
    settings.release_threshold = 0;  // idle pages go back to the backend at once
    importer.attach(settings);
    {
        PagePool pool(backend, settings);
        auto pages = pool.acquire(4);
        EXPECT_EQ(importer.imported_count(), 4u);
        std::set<VkDeviceAddress> addresses;
        for (const PooledPage& page : pages) {
            const VkDeviceAddress address = importer.device_address(page.slot);
            EXPECT_NE(address, 0u);
            EXPECT_EQ(address % 4096, 0u);
            addresses.insert(address);
            fill_words(reinterpret_cast<void*>(page.window), page.slot + 1);
        }
        EXPECT_EQ(addresses.size(), 4u);
        for (const PooledPage& page : pages) {
            auto words = gpu_words(*context, importer, page.slot);
            ASSERT_EQ(words.size(), page_bytes / 4);
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < words.size(); ++i) {
                wrong += words[i] != expected_word(page.slot + 1, i);
            }
            EXPECT_EQ(wrong, 0u) << "slot " << page.slot;
        }
        // Released pages are destroyed (threshold 0) and forgotten; the others stay.
        pool.release(std::span(pages).first(2));
        EXPECT_EQ(importer.imported_count(), 2u);
        EXPECT_EQ(importer.device_address(pages[0].slot), 0u);
        EXPECT_FALSE(importer.find(pages[1].slot).has_value());
        EXPECT_NE(importer.device_address(pages[2].slot), 0u);
        // New pages take the freed slots and are imported afresh.
        auto again = pool.acquire(2);
        EXPECT_EQ(importer.imported_count(), 4u);
        for (const PooledPage& page : again) EXPECT_NE(importer.device_address(page.slot), 0u);
        pool.release(again);
        pool.release(std::span(pages).subspan(2));
        EXPECT_EQ(importer.imported_count(), 0u);
    }
    const auto statistics = importer.statistics();
    EXPECT_EQ(statistics.imports, 6u);
    EXPECT_EQ(statistics.forgets, 6u);
    EXPECT_EQ(statistics.import_latency.count, 6u);
    EXPECT_EQ(backend.live_resources().pages, 0u);
    test::expect_no_validation_messages(*context);
}

TEST(VulkanPageImporter, RecycledPagesKeepTheirImport) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;
    settings.map_windows = true;
    settings.window_pages = 16;
    importer.attach(settings);
    PagePool pool(backend, settings);  // keeps idle pages: release_threshold SIZE_MAX
    PooledPage page = pool.acquire();
    const VkDeviceAddress address = importer.device_address(page.slot);
    for (int round = 0; round < 5; ++round) {
        pool.release(page);
        page = pool.acquire();
        EXPECT_EQ(importer.device_address(page.slot), address);
    }
    EXPECT_EQ(importer.statistics().imports, 1u);
    EXPECT_EQ(importer.statistics().forgets, 0u);
    pool.release(page);
    test::expect_no_validation_messages(*context);
}

TEST(VulkanPageImporter, WithoutWindowsMapsThePageItselfAndSharesItBothWays) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;  // no windows: the importer maps the page's memfd itself
    settings.release_threshold = 0;
    importer.attach(settings);
    PagePool pool(backend, settings);
    PooledPage page = pool.acquire();
    EXPECT_EQ(page.window, 0u);
    ASSERT_NE(importer.device_address(page.slot), 0u);
    // The CPU writes through a mapping of its own; the GPU sees it.
    const DeviceAddress address = backend.reserve(page_bytes);
    backend.map(address, page_bytes, page.handle);
    backend.set_access(address, page_bytes, Access::read_write);
    fill_words(reinterpret_cast<void*>(address), 77);
    auto words = gpu_words(*context, importer, page.slot);
    ASSERT_EQ(words.size(), page_bytes / 4);
    EXPECT_EQ(words[0], expected_word(77, 0));
    EXPECT_EQ(words[123456], expected_word(77, 123456));
    EXPECT_EQ(words.back(), expected_word(77, words.size() - 1));
    // The GPU writes; the CPU sees it.
    const VkBuffer buffer = importer.find(page.slot)->buffer;
    context->run_commands([&](VkCommandBuffer commands) {
        vkCmdFillBuffer(commands, buffer, 4096, 4096, 0x5a5a5a5au);
        record_memory_barrier(commands, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_HOST_BIT,
                              VK_ACCESS_2_HOST_READ_BIT);
    });
    const auto* cpu = reinterpret_cast<const std::uint32_t*>(address);
    EXPECT_EQ(cpu[1024], 0x5a5a5a5au);
    EXPECT_EQ(cpu[2047], 0x5a5a5a5au);
    EXPECT_EQ(cpu[1023], expected_word(77, 1023));
    EXPECT_EQ(cpu[2048], expected_word(77, 2048));
    backend.unmap(address, page_bytes);
    backend.free_reservation(address, page_bytes);
    // Forgotten when destroyed: the importer's own mapping goes with the import.
    pool.release(page);
    EXPECT_EQ(importer.imported_count(), 0u);
    EXPECT_EQ(backend.live_resources().pages, 0u);
    test::expect_no_validation_messages(*context);
}

TEST(VulkanPageImporter, AFailedImportFailsThePageCreationAndLeaksNothing) {
    HostBackend host;
    VTPAGE_VULKAN_OR_SKIP(context, host);
    FaultInjectingBackend backend(host);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;  // no windows: the import maps the page itself, which will fail
    importer.attach(settings);
    PagePool pool(backend, settings);
    backend.add_rule({BackendOperation::map, Errc::out_of_memory, 1});
    try {
        pool.acquire();
        FAIL() << "the page was handed out without its import";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_memory);
    }
    EXPECT_EQ(importer.imported_count(), 0u);
    EXPECT_EQ(host.live_resources().pages, 0u);
    // The next one works, in the slot the failed one gave back.
    PooledPage page = pool.acquire();
    EXPECT_EQ(page.slot, 0u);
    EXPECT_NE(importer.device_address(page.slot), 0u);
    pool.release(page);
    test::expect_no_validation_messages(*context);
}

TEST(VulkanPageImporter, ASlotIsImportedOnlyOnceAndForgettingTellsTheListenerFirst) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;
    settings.map_windows = true;
    settings.window_pages = 4;
    std::vector<std::uint32_t> heard;
    importer.set_forget_listener([&](std::uint32_t slot) {
        heard.push_back(slot);
        EXPECT_EQ(importer.imported_count(), 0u) << "the import is out of the table already";
    });
    std::vector<std::uint32_t> created_by_app;
    settings.on_created = [&](const PooledPage& page) { created_by_app.push_back(page.slot); };
    importer.attach(settings);
    {
        PagePool pool(backend, settings);
        PooledPage page = pool.acquire();
        EXPECT_EQ(created_by_app, std::vector<std::uint32_t>{page.slot});  // chained, not replaced
        try {
            importer.import_page(page);
            FAIL() << "a slot was imported twice";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument);
        }
        EXPECT_EQ(importer.imported_count(), 1u);
        pool.release(page);
    }  // the pool's destructor releases its idle page
    EXPECT_EQ(heard, std::vector<std::uint32_t>{0});
    importer.forget_page(PooledPage{{}, 3, 0});  // not imported: logged, ignored
    EXPECT_EQ(importer.statistics().forgets, 1u);
    test::expect_no_validation_messages(*context);
}

// A trim of many pages: every page leaves the table before its listener hears of it, each is
// heard of once, and every import is freed (the queue wait is once for the batch).
TEST(VulkanPageImporter, ATrimForgetsItsPagesAsABatch) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;
    settings.map_windows = true;
    settings.window_pages = 16;
    std::vector<std::uint32_t> heard;
    importer.set_forget_listener([&](std::uint32_t slot) {
        heard.push_back(slot);
        EXPECT_EQ(importer.device_address(slot), 0u) << "slot " << slot << " is still found";
    });
    importer.attach(settings);
    PagePool pool(backend, settings);
    std::vector<PooledPage> pages = pool.acquire(8);
    EXPECT_EQ(importer.imported_count(), 8u);
    pool.release(pages);
    pool.set_release_threshold(3 * pool.page_size());
    EXPECT_EQ(importer.imported_count(), 3u);
    std::sort(heard.begin(), heard.end());
    EXPECT_EQ(heard.size(), 5u);
    EXPECT_EQ(std::adjacent_find(heard.begin(), heard.end()), heard.end()) << "heard twice";
    EXPECT_EQ(importer.statistics().forgets, 5u);
    pool.set_release_threshold(0);
    EXPECT_EQ(importer.imported_count(), 0u);
    EXPECT_EQ(importer.statistics().forgets, 8u);
    test::expect_no_validation_messages(*context);
}

// A queue that does not finish its work (a lost or wedged device; here a batch waiting for a
// semaphore nobody signals): the batch of forgets waits its deadline once, and the pages are
// then freed without each waiting it again.
TEST(VulkanPageImporter, ForgettingBehindAStuckQueueWaitsOnceNotOncePerPage) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;
    settings.map_windows = true;
    settings.window_pages = 16;
    importer.attach(settings);
    PagePool pool(backend, settings);
    std::vector<PooledPage> pages = pool.acquire(6);
    pool.release(pages);
    VulkanTimeline never(*context, 0, false, "never signalled");
    VkSemaphoreSubmitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait.semaphore = never.get();
    wait.value = 1;
    wait.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkSubmitInfo2 stuck{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    stuck.waitSemaphoreInfoCount = 1;
    stuck.pWaitSemaphoreInfos = &wait;
    context->submit(stuck, VK_NULL_HANDLE, "stuck batch");
    const auto start = std::chrono::steady_clock::now();
    pool.set_release_threshold(0);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(importer.imported_count(), 0u);
    EXPECT_EQ(importer.statistics().forgets, 6u);
    // One deadline (10 s), not seven (the batch's and each page's).
    EXPECT_LT(seconds, 25.0) << "each page waited for the stuck queue on its own";
    never.signal(1);  // the queue finishes, so that the context can go
    context->wait_idle();
}

TEST(VulkanPageImporter, PoolWorkersImportAndForgetConcurrently) {
    HostBackend backend;
    VTPAGE_VULKAN_OR_SKIP(context, backend);
    VulkanPageImporter importer(*context, backend);
    PagePoolSettings settings;
    settings.map_windows = true;
    settings.window_pages = 64;
    settings.release_threshold = 4 * page_bytes;  // churn: pages are created and destroyed
    importer.attach(settings);
    const int rounds = test::under_thread_sanitizer ? 10 : 40;
    {
        PagePool pool(backend, settings);
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                try {
                    for (int round = 0; round < rounds; ++round) {
                        auto pages = pool.acquire(1 + (round + t) % 3);
                        for (const PooledPage& page : pages) {
                            if (importer.device_address(page.slot) == 0) ++failures;
                        }
                        pool.release(pages);
                    }
                } catch (const std::exception& error) {
                    ADD_FAILURE() << error.what();
                    ++failures;
                }
            });
        }
        for (auto& thread : threads) thread.join();
        EXPECT_EQ(failures.load(), 0);
        const auto pool_statistics = pool.statistics();
        EXPECT_EQ(importer.statistics().imports, pool_statistics.creates);
        EXPECT_EQ(importer.statistics().forgets, pool_statistics.releases);
        EXPECT_EQ(importer.imported_count(), pool_statistics.creates - pool_statistics.releases);
    }
    EXPECT_EQ(importer.imported_count(), 0u);
    test::expect_no_validation_messages(*context);
}

}  // namespace
}  // namespace vtpage
