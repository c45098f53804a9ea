// The indirection table: what it publishes, what it drops as stale, what reaches the device and
// when, on its own and wired to a page table.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "../support/backend_fixture.hpp"
#include "vtpage/core/page_pool.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"
#include "vulkan_test_support.hpp"

namespace vtpage {
namespace {

std::vector<std::uint64_t> device_entries(VulkanContext& context,
                                          const VulkanIndirectionTable& table) {
    auto bytes = test::read_buffer(context, table.buffer(), 0, table.page_count() * 8);
    std::vector<std::uint64_t> entries(table.page_count());
    std::memcpy(entries.data(), bytes.data(), bytes.size());
    return entries;
}

IndirectionUpload upload(VulkanContext& context, VulkanIndirectionTable& table,
                         std::uint32_t frame_slot) {
    IndirectionUpload result;
    auto lock = table.lock_submission();
    context.run_commands(
        [&](VkCommandBuffer commands) { result = table.record_upload(commands, frame_slot); });
    return result;
}

// Every entry on the device is what `expected` says (page -> slot), 0 elsewhere.
void expect_device_table(VulkanContext& context, const VulkanIndirectionTable& table,
                         const VulkanPageImporter& importer,
                         const std::map<PageIndex, std::uint32_t>& expected) {
    const auto entries = device_entries(context, table);
    for (PageIndex page = 0; page < entries.size(); ++page) {
        auto found = expected.find(page);
        const std::uint64_t want =
            found == expected.end() ? 0 : importer.device_address(found->second);
        EXPECT_EQ(entries[page], want) << "page " << page;
    }
}

// On each backend: host pages in lavapipe (CI), cuda pages in the GPU's driver.
class VulkanIndirectionTableTest : public testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        std::string reason;
        owned_backend = test::try_make_backend(GetParam(), reason);
        if (!owned_backend) GTEST_SKIP() << GetParam() << " backend unavailable: " << reason;
        context = test::try_make_vulkan_context(*owned_backend, reason);
        if (!context) GTEST_SKIP() << "no Vulkan device: " << reason;
        importer = std::make_unique<VulkanPageImporter>(*context, *owned_backend);
        pool_settings.map_windows = true;
        pool_settings.window_pages = 64;
        importer->attach(pool_settings);
    }
    void TearDown() override {
        if (context) test::expect_no_validation_messages(*context);
    }
    std::unique_ptr<Backend> owned_backend;
    std::unique_ptr<VulkanContext> context;
    std::unique_ptr<VulkanPageImporter> importer;
    PagePoolSettings pool_settings;
};

TEST_P(VulkanIndirectionTableTest, UploadsWhatChangedAsRunsOfEntries) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(3);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 100});
    EXPECT_NE(table.device_address(), 0u);
    table.publish(5, pages[0].slot);
    table.publish(6, pages[1].slot);
    table.publish(50, pages[2].slot);
    EXPECT_EQ(table.published_count(), 3u);
    EXPECT_EQ(table.slot_of(6), pages[1].slot);
    EXPECT_FALSE(table.slot_of(7).has_value());

    const IndirectionUpload first = upload(*context, table, 0);
    EXPECT_TRUE(first.cleared);
    EXPECT_EQ(first.entries, 3u);
    EXPECT_EQ(first.regions, 2u);  // 5-6 and 50
    EXPECT_EQ(first.wait_semaphore, VK_NULL_HANDLE);
    expect_device_table(*context, table, *importer,
                        {{5, pages[0].slot}, {6, pages[1].slot}, {50, pages[2].slot}});

    // The page behind 6 now backs 7: 6 no longer reaches it, without a clear of its own.
    table.publish(7, pages[1].slot);
    table.clear(50);
    const IndirectionUpload second = upload(*context, table, 1);
    EXPECT_FALSE(second.cleared);
    EXPECT_EQ(second.entries, 3u);  // 6, 7, 50
    EXPECT_EQ(second.regions, 2u);
    expect_device_table(*context, table, *importer, {{5, pages[0].slot}, {7, pages[1].slot}});
    EXPECT_EQ(upload(*context, table, 0).entries, 0u);  // nothing changed

    EXPECT_THROW(table.publish(100, pages[0].slot), Error);
    try {
        table.publish(1, 60);  // a slot nothing was imported into
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::not_mapped);
    }
    const auto statistics = table.statistics();
    EXPECT_EQ(statistics.published, 2u);
    EXPECT_EQ(statistics.pending, 0u);
    EXPECT_EQ(statistics.uploaded_entries, 6u);
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, ScattersManyRunsWithOneDispatch) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(24);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 256, .max_copy_regions = 8});
    // 24 pages, no two neighbours: 24 runs, above the limit of 8 copy regions.
    std::map<PageIndex, std::uint32_t> expected;
    for (std::size_t i = 0; i < pages.size(); ++i) {
        const PageIndex page = 3 + 10 * i;
        table.publish(page, pages[i].slot);
        expected[page] = pages[i].slot;
    }
    const IndirectionUpload first = upload(*context, table, 0);
    EXPECT_TRUE(first.cleared);
    EXPECT_TRUE(first.scattered);
    EXPECT_EQ(first.entries, 24u);
    EXPECT_EQ(first.regions, 24u);
    expect_device_table(*context, table, *importer, expected);

    // Clears travel the same way (value 0), and a page that moves to another slot too.
    for (std::size_t i = 0; i < 12; ++i) {
        table.clear(3 + 10 * i);
        expected.erase(3 + 10 * i);
    }
    const IndirectionUpload second = upload(*context, table, 1);
    EXPECT_TRUE(second.scattered);
    EXPECT_EQ(second.entries, 12u);
    expect_device_table(*context, table, *importer, expected);

    // Few runs are copies: pages 100..107 are one run.
    for (std::uint32_t i = 0; i < 8; ++i) {
        table.publish(100 + i, pages[i].slot);
        expected[100 + i] = pages[i].slot;
    }
    const IndirectionUpload third = upload(*context, table, 0);
    EXPECT_FALSE(third.scattered);
    EXPECT_EQ(third.regions, 1u);
    expect_device_table(*context, table, *importer, expected);
    EXPECT_EQ(table.statistics().scattered_uploads, 2u);
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, AlwaysScattersWithNoCopyRegionsAllowed) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(2);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 300, .max_copy_regions = 0});
    table.publish(0, pages[0].slot);
    table.publish(299, pages[1].slot);  // the last entry
    const IndirectionUpload first = upload(*context, table, 0);
    EXPECT_TRUE(first.scattered);
    expect_device_table(*context, table, *importer, {{0, pages[0].slot}, {299, pages[1].slot}});
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, HoldsPagesBackUntilTheirFillIsDone) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(3);
    VulkanTimeline fills(*context, 0, false, "test fills");
    VulkanIndirectionTable table(
        *context, *importer,
        {.page_count = 32, .fill_timeline = fills.get(), .publish_when_filled = true});
    const PageMapping a{4, pages[0], 1};
    const PageMapping b{5, pages[1], 2};
    table.ready(std::span(&a, 1), 3);
    table.ready(std::span(&b, 1), 5);
    EXPECT_EQ(table.published_count(), 0u);
    EXPECT_EQ(table.statistics().awaiting_fill, 2u);
    IndirectionUpload up = upload(*context, table, 0);
    EXPECT_EQ(up.entries, 0u);
    EXPECT_EQ(up.wait_value, 0u) << "nothing published: the frame waits for nothing";
    expect_device_table(*context, table, *importer, {});

    fills.signal(3);  // a's fill is done, b's not yet
    up = upload(*context, table, 1);
    EXPECT_EQ(up.entries, 1u);
    EXPECT_EQ(up.fill_value, 3u);
    EXPECT_EQ(up.wait_value, 0u) << "the host saw fill 3 done: the device need not wait";
    EXPECT_EQ(table.slot_of(4), pages[0].slot);
    EXPECT_FALSE(table.slot_of(5).has_value());
    expect_device_table(*context, table, *importer, {{4, pages[0].slot}});

    // b is evicted before its fill ends: it never reaches the table. c takes a's physical page
    // (a's eviction event still to come): a leaves the table at once, c waits for its fill.
    table.evicted(std::span(&b, 1));
    const PageMapping c{9, pages[0], 3};
    table.ready(std::span(&c, 1), 7);
    EXPECT_FALSE(table.slot_of(4).has_value());
    fills.signal(7);
    up = upload(*context, table, 0);
    EXPECT_EQ(table.statistics().awaiting_fill, 0u);
    expect_device_table(*context, table, *importer, {{9, pages[0].slot}});

    // A late ready of an older generation is stale; fill value 0 publishes at once.
    const PageMapping old_c{9, pages[2], 2};
    table.ready(std::span(&old_c, 1), 8);
    EXPECT_EQ(table.slot_of(9), pages[0].slot);
    EXPECT_EQ(table.statistics().stale_ready_pages, 1u);
    const PageMapping d{11, pages[2], 4};
    table.ready(std::span(&d, 1), 0);
    EXPECT_EQ(table.slot_of(11), pages[2].slot);
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, FramesWaitOnTheDeviceOnlyForFillsNotSeenDone) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(2);
    VulkanTimeline fills(*context, 0, false, "test fills");
    VulkanIndirectionTable table(*context, *importer,
                                 {.page_count = 32, .fill_timeline = fills.get()});
    const PageMapping a{4, pages[0], 1};
    table.ready(std::span(&a, 1), 4);
    EXPECT_EQ(table.slot_of(4), pages[0].slot) << "published at once, the frame waits instead";
    IndirectionUpload up = upload(*context, table, 0);
    EXPECT_EQ(up.fill_value, 4u);
    EXPECT_EQ(up.wait_value, 4u);
    EXPECT_EQ(up.wait_semaphore, fills.get());

    fills.signal(4);
    const PageMapping b{5, pages[1], 2};
    table.ready(std::span(&b, 1), 4);
    up = upload(*context, table, 1);
    EXPECT_EQ(up.fill_value, 4u);
    EXPECT_EQ(up.wait_value, 0u) << "the timeline already stands at 4";
    EXPECT_EQ(up.wait_semaphore, VK_NULL_HANDLE);
    expect_device_table(*context, table, *importer, {{4, pages[0].slot}, {5, pages[1].slot}});
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, FollowsThePageTableAndDropsStaleReadyEvents) {
    VulkanIndirectionTable indirection(*context, *importer, {.page_count = 64});
    PageTableSettings settings;
    settings.region_size = 64 * 2_MiB;
    settings.budget_bytes = 4 * 2_MiB;
    settings.map_into_region = false;
    settings.pool = pool_settings;
    int app_evictions = 0;
    settings.on_evicted = [&](std::span<const PageMapping> pages) {
        app_evictions += static_cast<int>(pages.size());
    };
    indirection.connect(settings);
    PageTable table(*owned_backend, settings);
    indirection.check_against(&table);

    const PageIndex first[] = {1, 2, 3};
    auto mappings = table.commit(first);
    indirection.ready(mappings);
    EXPECT_EQ(indirection.published_count(), 3u);
    std::map<PageIndex, std::uint32_t> expected;
    for (const auto& m : mappings) expected[m.page] = m.physical.slot;
    upload(*context, indirection, 0);
    expect_device_table(*context, indirection, *importer, expected);

    // Evicted: cleared through the chained callback (the app's callback still runs).
    const PageMapping old_two = mappings[1];
    const PageIndex two[] = {2};
    table.evict(two);
    EXPECT_EQ(app_evictions, 1);
    EXPECT_FALSE(indirection.slot_of(2).has_value());
    // A ready that was in flight for the evicted page comes late: dropped.
    indirection.ready(std::span(&old_two, 1));
    EXPECT_FALSE(indirection.slot_of(2).has_value());
    EXPECT_EQ(indirection.statistics().stale_ready_pages, 1u);
    // Recommitted (a new generation): published again; the old event stays stale.
    auto again = table.commit(two);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_GT(again[0].generation, old_two.generation);
    indirection.ready(std::span(&old_two, 1));
    EXPECT_FALSE(indirection.slot_of(2).has_value());
    indirection.ready(again);
    EXPECT_EQ(indirection.slot_of(2), again[0].physical.slot);
    expected[2] = again[0].physical.slot;

    // Committing past the budget evicts by LRU: those entries go too.
    const PageIndex more[] = {10, 11, 12};
    auto more_mappings = table.commit(more);
    indirection.ready(more_mappings);
    for (const auto& m : more_mappings) expected[m.page] = m.physical.slot;
    for (PageIndex page : {PageIndex(1), PageIndex(2), PageIndex(3)}) {
        if (!table.is_resident(page)) expected.erase(page);
    }
    EXPECT_EQ(indirection.published_count(), table.resident_count());
    upload(*context, indirection, 1);
    expect_device_table(*context, indirection, *importer, expected);
    table.shutdown();
    EXPECT_EQ(indirection.published_count(), 0u);
}

TEST_P(VulkanIndirectionTableTest, ADestroyedPhysicalPageLeavesTheTable) {
    pool_settings.release_threshold = 0;  // a released page is destroyed at once
    PagePool pool(*owned_backend, pool_settings);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 16});
    PooledPage page = pool.acquire();
    table.publish(9, page.slot);
    upload(*context, table, 0);
    pool.release(page);  // destroyed: the importer tells the table before freeing the import
    EXPECT_FALSE(table.slot_of(9).has_value());
    EXPECT_EQ(table.statistics().retired_slots, 1u);
    upload(*context, table, 1);
    expect_device_table(*context, table, *importer, {});
}

// Packed tails: entries that point into the physical page of another page, at their offsets;
// they go with that physical page, and a bad offset is refused.
TEST_P(VulkanIndirectionTableTest, PackedTailsPointIntoTheirHostPageAndLeaveWithIt) {
    pool_settings.release_threshold = 0;
    PagePool pool(*owned_backend, pool_settings);
    PooledPage host = pool.acquire();
    PooledPage other = pool.acquire();
    VulkanIndirectionTable table(*context, *importer, {.page_count = 64});
    auto packed = [&](PageIndex page, const PooledPage& physical, PageIndex table_page,
                      std::uint64_t offset) {
        vt::StreamedPage event;
        event.page = page;
        event.physical = physical;
        event.table_page = table_page;
        event.offset = offset;
        event.bytes = 448_KiB;
        return event;
    };
    table.publish(10, host.slot);
    const std::vector<vt::StreamedPage> tails = {packed(20, host, 10, 448_KiB),
                                                 packed(30, host, 10, 896_KiB)};
    table.ready(tails);
    EXPECT_EQ(table.slot_of(20), host.slot);
    EXPECT_EQ(table.slot_of(30), host.slot);
    const IndirectionUpload first = upload(*context, table, 0);
    EXPECT_EQ(first.published_pages, (std::vector<PageIndex>{10, 20, 30}));
    auto entries = device_entries(*context, table);
    const std::uint64_t base = importer->device_address(host.slot);
    EXPECT_EQ(entries[10], base);
    EXPECT_EQ(entries[20], base + 448_KiB);
    EXPECT_EQ(entries[30], base + 896_KiB);

    // Past the page's end: refused, nothing published.
    const vt::StreamedPage beyond = packed(40, host, 10, 2_MiB - 32_KiB);
    try {
        table.ready(std::span(&beyond, 1));
        FAIL() << "a tail past its page was published";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
    }
    EXPECT_FALSE(table.slot_of(40).has_value());

    // A packed tail in another page does not go with the first.
    const vt::StreamedPage elsewhere = packed(50, other, 11, 0 + 64_KiB);
    table.publish(11, other.slot);
    table.ready(std::span(&elsewhere, 1));
    pool.release(host);  // destroyed: its page and the tails in it leave the table
    EXPECT_FALSE(table.slot_of(10).has_value());
    EXPECT_FALSE(table.slot_of(20).has_value());
    EXPECT_FALSE(table.slot_of(30).has_value());
    EXPECT_EQ(table.slot_of(50), other.slot);
    upload(*context, table, 1);
    entries = device_entries(*context, table);
    EXPECT_EQ(entries[20], 0u);
    EXPECT_EQ(entries[30], 0u);
    EXPECT_EQ(entries[50], importer->device_address(other.slot) + 64_KiB);
    pool.release(other);
}

// Packed coarse levels come and go while their host page stays: an eviction clears the level's
// entry alone, the same place then serves another level, and under a publish limit packed pages
// wait their turn like any page (and leave with their host's slot while they wait).
TEST_P(VulkanIndirectionTableTest, PackedLevelsLeaveOnTheirOwnAndWaitForThePublishLimit) {
    pool_settings.release_threshold = 0;
    PagePool pool(*owned_backend, pool_settings);
    PooledPage host = pool.acquire();
    VulkanIndirectionTable table(*context, *importer, {.page_count = 64});
    auto level = [&](PageIndex page, std::uint64_t offset, std::uint64_t tiles = 19) {
        vt::StreamedPage event;
        event.page = page;
        event.physical = host;
        event.table_page = 63;  // the streamer's own page, never published itself
        event.offset = offset;
        event.bytes = tiles * 64_KiB;  // 3 x 3 tiles of an 8 x 4 page span 19, 2 x 2 span 10
        return event;
    };
    const std::uint64_t base = importer->device_address(host.slot);
    const std::vector<vt::StreamedPage> first = {level(20, 0), level(30, 3 * 64_KiB)};
    table.ready(first);
    upload(*context, table, 0);
    auto entries = device_entries(*context, table);
    EXPECT_EQ(entries[20], base);
    EXPECT_EQ(entries[30], base + 3 * 64_KiB);

    // Level 20 leaves; 30 stays; level 40 takes 20's place.
    table.evicted(std::span(&first[0], 1));
    EXPECT_FALSE(table.slot_of(20).has_value());
    EXPECT_EQ(table.slot_of(30), host.slot);
    const vt::StreamedPage next = level(40, 0);
    table.ready(std::span(&next, 1));
    const IndirectionUpload second = upload(*context, table, 1);
    EXPECT_EQ(second.published_pages, (std::vector<PageIndex>{40}));
    entries = device_entries(*context, table);
    EXPECT_EQ(entries[20], 0u);
    EXPECT_EQ(entries[30], base + 3 * 64_KiB);
    EXPECT_EQ(entries[40], base);

    // One page an upload: two packed levels take two uploads, in the order they became ready.
    table.set_publish_limit(1);
    table.evicted(std::span(&next, 1));
    table.evicted(std::span(&first[1], 1));
    const std::vector<vt::StreamedPage> burst = {level(50, 0), level(41, 3 * 64_KiB)};
    table.ready(burst);
    EXPECT_EQ(table.statistics().waiting_for_limit, 2u);
    EXPECT_EQ(upload(*context, table, 0).published_pages, (std::vector<PageIndex>{50}));
    EXPECT_EQ(upload(*context, table, 1).published_pages, (std::vector<PageIndex>{41}));
    entries = device_entries(*context, table);
    EXPECT_EQ(entries[40], 0u);
    EXPECT_EQ(entries[50], base);
    EXPECT_EQ(entries[41], base + 3 * 64_KiB);

    // A level still waiting when its host page is destroyed is never published.
    const vt::StreamedPage waiting[] = {level(60, 6 * 64_KiB, 10), level(61, 22 * 64_KiB, 10)};
    table.ready(waiting);
    pool.release(host);
    EXPECT_EQ(table.statistics().waiting_for_limit, 0u);
    upload(*context, table, 0);
    upload(*context, table, 1);
    entries = device_entries(*context, table);
    for (PageIndex page : {20, 30, 40, 41, 50, 60, 61}) EXPECT_EQ(entries[page], 0u) << page;
    EXPECT_EQ(table.published_count(), 0u);
}

TEST_P(VulkanIndirectionTableTest, FramesInFlightEachSeeTheirOwnTable) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(2);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 32});
    // Three frames submitted back to back and waited for only at the end, each copying the
    // table as its own upload left it. Frame 3 reuses frame 1's staging buffer once frame 1 is
    // done, as the renderer does (frame i signals i on a timeline).
    VulkanBuffer snapshots(*context, 3 * 32 * 8, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           BufferMemory::readback, "snapshots");
    VulkanTimeline done(*context);
    const UniqueVkCommandPool command_pool = test::make_command_pool(*context);
    VkCommandBuffer commands[3];
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = command_pool.get();
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 3;
    ASSERT_EQ(vkAllocateCommandBuffers(context->device(), &allocate, commands), VK_SUCCESS);
    auto frame = [&](std::uint32_t index) {
        const std::uint32_t slot = index % table.frames_in_flight();
        if (index >= table.frames_in_flight()) done.wait(index + 1 - table.frames_in_flight());
        VkCommandBuffer command = commands[index];
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        ASSERT_EQ(vkBeginCommandBuffer(command, &begin), VK_SUCCESS);
        auto lock = table.lock_submission();
        table.record_upload(command, slot);
        record_memory_barrier(command, VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                              VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT,
                              VK_ACCESS_2_TRANSFER_READ_BIT);
        VkBufferCopy region{0, index * 32 * 8, 32 * 8};
        vkCmdCopyBuffer(command, table.buffer(), snapshots.get(), 1, &region);
        ASSERT_EQ(vkEndCommandBuffer(command), VK_SUCCESS);
        VkCommandBufferSubmitInfo buffer_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        buffer_info.commandBuffer = command;
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = done.get();
        signal.value = index + 1;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &buffer_info;
        submit.signalSemaphoreInfoCount = 1;
        submit.pSignalSemaphoreInfos = &signal;
        context->submit(submit);
    };
    table.publish(3, pages[0].slot);
    frame(0);
    table.publish(4, pages[1].slot);
    table.clear(3);
    frame(1);
    table.publish(3, pages[0].slot);
    frame(2);
    done.wait(3);
    snapshots.invalidate();
    const auto* entries = reinterpret_cast<const std::uint64_t*>(snapshots.mapped());
    const std::uint64_t a = importer->device_address(pages[0].slot);
    const std::uint64_t b = importer->device_address(pages[1].slot);
    EXPECT_EQ(entries[0 * 32 + 3], a);
    EXPECT_EQ(entries[0 * 32 + 4], 0u);
    EXPECT_EQ(entries[1 * 32 + 3], 0u);
    EXPECT_EQ(entries[1 * 32 + 4], b);
    EXPECT_EQ(entries[2 * 32 + 3], a);
    EXPECT_EQ(entries[2 * 32 + 4], b);
    pool.release(pages);
}

// The entries the first `count` of `order` should have on the device.
std::map<PageIndex, std::uint32_t> first_of(const std::vector<PageMapping>& order,
                                            std::size_t count) {
    std::map<PageIndex, std::uint32_t> expected;
    for (std::size_t i = 0; i < count && i < order.size(); ++i) {
        expected[order[i].page] = order[i].physical.slot;
    }
    return expected;
}

TEST_P(VulkanIndirectionTableTest, PublishLimitSpreadsABurstOverUploadsInReadyOrder) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(10);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 64});
    EXPECT_EQ(table.publish_limit(), 0u);
    table.set_publish_limit(3);
    EXPECT_EQ(table.publish_limit(), 3u);
    // Ready in an order that is not the pages' order: 5, 12, ..., 61, then 4.
    std::vector<PageMapping> order;
    for (std::size_t i = 0; i < pages.size(); ++i) order.push_back({(5 + 7 * i) % 64, pages[i], 1});
    table.ready(order);
    EXPECT_EQ(table.published_count(), 0u) << "held for the next upload";
    EXPECT_EQ(table.statistics().waiting_for_limit, 10u);

    const std::size_t waiting_after[] = {7, 4, 1, 0};
    const std::uint64_t limited_after[] = {1, 2, 3, 3};
    for (std::size_t i = 0; i < 4; ++i) {
        const IndirectionUpload up = upload(*context, table, i % 2);
        const std::size_t visible = std::min<std::size_t>(3 * (i + 1), 10);
        EXPECT_EQ(up.entries, visible - 3 * i) << "upload " << i;
        EXPECT_EQ(up.published_pages.size(), visible - 3 * i) << "upload " << i;
        expect_device_table(*context, table, *importer, first_of(order, visible));
        EXPECT_EQ(table.published_count(), visible);
        const auto statistics = table.statistics();
        EXPECT_EQ(statistics.waiting_for_limit, waiting_after[i]) << "upload " << i;
        EXPECT_EQ(statistics.limited_uploads, limited_after[i]) << "upload " << i;
        EXPECT_EQ(statistics.awaiting_fill, 0u);
    }
    EXPECT_EQ(table.slot_of(order[9].page), pages[9].slot);
    EXPECT_EQ(upload(*context, table, 0).entries, 0u);
    EXPECT_EQ(table.statistics().limited_uploads, 3u);
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, PublishLimitNeverDelaysEvictionsNorPublishesEvictedPages) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(6);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 32});
    table.set_publish_limit(2);
    std::vector<PageMapping> order;
    for (std::size_t i = 0; i < pages.size(); ++i) order.push_back({10 + i, pages[i], 1});
    table.ready(order);
    upload(*context, table, 0);  // 10 and 11 visible; 12..15 wait
    expect_device_table(*context, table, *importer, first_of(order, 2));

    // 11 (visible) and 12 (waiting) are evicted: 11 is cleared at the next upload although the
    // limit is taken by 13 and 14, and 12 never appears.
    const PageMapping gone[] = {order[1], order[2]};
    table.evicted(gone);
    EXPECT_FALSE(table.slot_of(11).has_value());
    EXPECT_EQ(table.statistics().waiting_for_limit, 3u);
    IndirectionUpload up = upload(*context, table, 1);
    EXPECT_EQ(up.entries, 3u);  // clears 11, publishes 13 and 14
    EXPECT_EQ(up.published_pages, (std::vector<PageIndex>{13, 14})) << "11 is cleared, not shown";
    expect_device_table(*context, table, *importer,
                        {{10, pages[0].slot}, {13, pages[3].slot}, {14, pages[4].slot}});
    up = upload(*context, table, 0);
    EXPECT_EQ(up.entries, 1u);  // 15
    EXPECT_EQ(table.statistics().waiting_for_limit, 0u);
    expect_device_table(
        *context, table, *importer,
        {{10, pages[0].slot}, {13, pages[3].slot}, {14, pages[4].slot}, {15, pages[5].slot}});
    EXPECT_FALSE(table.slot_of(12).has_value());
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, AWaitingPageRecommittedWaitsAsItsNewGeneration) {
    VulkanIndirectionTable indirection(*context, *importer, {.page_count = 64});
    PageTableSettings settings;
    settings.region_size = 64 * 2_MiB;
    settings.budget_bytes = 8 * 2_MiB;
    settings.map_into_region = false;
    settings.pool = pool_settings;
    indirection.connect(settings);
    PageTable table(*owned_backend, settings);
    indirection.check_against(&table);
    indirection.set_publish_limit(1);

    const PageIndex committed[] = {1, 2, 3};
    const auto first = table.commit(committed);
    ASSERT_EQ(first.size(), 3u);
    ASSERT_EQ(first[2].page, 3u);
    indirection.ready(first);
    EXPECT_EQ(indirection.statistics().waiting_for_limit, 3u);
    // Page 3 is evicted and committed again while it waits: the old mapping is gone from the
    // queue, a late ready of it is stale, and the new one waits behind 1 and 2.
    const PageIndex three[] = {3};
    table.evict(three);
    EXPECT_EQ(indirection.statistics().waiting_for_limit, 2u);
    const auto again = table.commit(three);
    ASSERT_EQ(again.size(), 1u);
    ASSERT_GT(again[0].generation, first[2].generation);
    indirection.ready(std::span(&first[2], 1));
    EXPECT_EQ(indirection.statistics().stale_ready_pages, 1u);
    indirection.ready(again);
    // A late eviction event of the old generation leaves the new one waiting.
    indirection.evicted(std::span(&first[2], 1));
    EXPECT_EQ(indirection.statistics().waiting_for_limit, 3u);

    std::map<PageIndex, std::uint32_t> expected;
    for (const PageMapping& mapping : {first[0], first[1], again[0]}) {
        upload(*context, indirection, 0);
        expected[mapping.page] = mapping.physical.slot;
        expect_device_table(*context, indirection, *importer, expected);
    }
    EXPECT_EQ(indirection.slot_of(3), again[0].physical.slot);
    EXPECT_EQ(indirection.statistics().limited_uploads, 2u);
    table.shutdown();
    EXPECT_EQ(indirection.published_count(), 0u);
}

TEST_P(VulkanIndirectionTableTest, NoPublishLimitPublishesEveryWaitingPageAtTheNextUpload) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(8);
    VulkanIndirectionTable table(*context, *importer, {.page_count = 16});
    table.set_publish_limit(3);
    std::vector<PageMapping> order;
    for (std::size_t i = 0; i < pages.size(); ++i) order.push_back({i, pages[i], 1});
    table.ready(order);
    upload(*context, table, 0);
    EXPECT_EQ(table.statistics().waiting_for_limit, 5u);
    table.set_publish_limit(0);
    const IndirectionUpload up = upload(*context, table, 1);
    EXPECT_EQ(up.entries, 5u);
    expect_device_table(*context, table, *importer, first_of(order, 8));
    const auto statistics = table.statistics();
    EXPECT_EQ(statistics.waiting_for_limit, 0u);
    EXPECT_EQ(statistics.limited_uploads, 1u);
    EXPECT_EQ(statistics.published, 8u);
    EXPECT_EQ(statistics.uploaded_entries, 8u);
    // Without a limit, ready pages are published at once again.
    table.clear(7);
    table.ready(std::span(&order[7], 1));
    EXPECT_EQ(table.slot_of(7), pages[7].slot);
    pool.release(pages);
}

TEST_P(VulkanIndirectionTableTest, PublishLimitCountsPagesWhoseFillsAreDone) {
    PagePool pool(*owned_backend, pool_settings);
    auto pages = pool.acquire(3);
    VulkanTimeline fills(*context, 0, false, "test fills");
    VulkanIndirectionTable table(
        *context, *importer,
        {.page_count = 32, .fill_timeline = fills.get(), .publish_when_filled = true});
    table.set_publish_limit(1);
    const PageMapping mappings[] = {{20, pages[0], 1}, {4, pages[1], 1}, {9, pages[2], 1}};
    table.ready(std::span(&mappings[0], 1), 2);
    table.ready(std::span(&mappings[1], 1), 1);
    table.ready(std::span(&mappings[2], 1), 3);
    EXPECT_EQ(table.statistics().awaiting_fill, 3u);
    fills.signal(2);  // 4 and 20 are filled, in that order; 9 is not
    upload(*context, table, 0);
    expect_device_table(*context, table, *importer, {{4, pages[1].slot}});
    auto statistics = table.statistics();
    EXPECT_EQ(statistics.awaiting_fill, 1u);
    EXPECT_EQ(statistics.waiting_for_limit, 1u);
    fills.signal(3);
    upload(*context, table, 1);
    expect_device_table(*context, table, *importer, {{4, pages[1].slot}, {20, pages[0].slot}});
    upload(*context, table, 0);
    expect_device_table(*context, table, *importer,
                        {{4, pages[1].slot}, {20, pages[0].slot}, {9, pages[2].slot}});
    statistics = table.statistics();
    EXPECT_EQ(statistics.awaiting_fill, 0u);
    EXPECT_EQ(statistics.waiting_for_limit, 0u);
    EXPECT_EQ(statistics.limited_uploads, 2u);
    pool.release(pages);
}

INSTANTIATE_TEST_SUITE_P(Backends, VulkanIndirectionTableTest,
                         testing::ValuesIn(test::all_backend_names()), test::backend_param_name);

}  // namespace
}  // namespace vtpage
