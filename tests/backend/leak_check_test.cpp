#include <gtest/gtest.h>
#include <sys/mman.h>

#include "../support/backend_fixture.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/backend/leak_check.hpp"

namespace vtpage {
namespace {

LeakCheckSettings host_only() {
    LeakCheckSettings settings;
    settings.device_memory = false;
    return settings;
}

TEST(LeakCheck, NothingDoneIsClean) {
    HostBackend backend;
    LeakCheck leaks(backend, host_only());
    const LeakReport report = leaks.check();
    EXPECT_TRUE(report.clean()) << report.describe();
    EXPECT_EQ(report.leaked_bytes(), 0u);
    EXPECT_EQ(report.describe(), "no leaks");
}

TEST(LeakCheck, FindsAPageADescriptorAndAMappingLeft) {
    HostBackend backend;
    const std::size_t page = backend.granularity().minimum;
    LeakCheck leaks(backend, host_only());
    const DeviceAddress base = backend.reserve(4 * page);
    PhysicalHandle handle = backend.create(page);
    backend.map(base, page, handle);
    UniqueFd exported = backend.export_fd(handle);
    LeakReport report = leaks.check();
    EXPECT_FALSE(report.clean());
    EXPECT_EQ(report.leaked_descriptors(), 2u);  // the page's memfd and the exported one
    EXPECT_GE(report.leaked_bytes(), page);      // the page, plus the reservation
    EXPECT_EQ(report.live_after.pages, report.live_before.pages + 1);
    bool page_mapping = false;
    for (const MappedRange& range : report.process.mappings) {
        page_mapping = page_mapping || range.path.find("vtpage-page") != std::string::npos;
    }
    EXPECT_TRUE(page_mapping) << report.describe();

    // Released but still mapped: the page's memory and its mapping are still there.
    backend.release(handle);
    exported.reset();
    report = leaks.check();
    EXPECT_FALSE(report.clean());
    EXPECT_EQ(report.leaked_descriptors(), 0u);
    EXPECT_EQ(report.live_after.mappings, report.live_before.mappings + 1);

    backend.unmap(base, page);
    backend.free_reservation(base, 4 * page);
    report = leaks.check();
    EXPECT_TRUE(report.clean()) << report.describe();
}

TEST(LeakCheck, CountsReservationsAndWatchedRangesNotArenas) {
    HostBackend backend;
    LeakCheck leaks(backend, host_only());
    // An arena-sized inaccessible range, as the C library keeps for threads: not counted.
    const std::size_t arena = 64 << 20;
    void* small =
        mmap(nullptr, arena, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(small, MAP_FAILED);
    LeakReport report = leaks.check();
    EXPECT_TRUE(report.clean()) << report.describe();
    EXPECT_GE(report.unattributed_mapped_bytes, arena);
    // Inside a watched range it counts.
    leaks.watch(reinterpret_cast<DeviceAddress>(small), arena);
    report = leaks.check();
    EXPECT_FALSE(report.clean());
    EXPECT_GE(report.process.mapped_bytes, arena);
    munmap(small, arena);
    // A large reservation counts anywhere.
    const std::size_t reservation = std::size_t(1) << 30;
    void* large =
        mmap(nullptr, reservation, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(large, MAP_FAILED);
    report = leaks.check();
    EXPECT_FALSE(report.clean());
    EXPECT_GE(report.leaked_bytes(), reservation);
    munmap(large, reservation);
    EXPECT_TRUE(leaks.check().clean()) << leaks.check().describe();
}

// On a GPU, the device's free memory comes back to the baseline once pages are released.
TEST(LeakCheck, DeviceMemoryComesBackOnAGpu) {
    VTPAGE_BACKEND_OR_SKIP(backend, "cuda");
    LeakCheck leaks(*backend);
    const std::size_t page = backend->granularity().minimum;
    std::vector<PhysicalHandle> pages;
    for (int i = 0; i < 16; ++i) pages.push_back(backend->create(page));
    const LeakReport held = leaks.check();
    EXPECT_TRUE(held.device_checked);
    EXPECT_GE(held.device_bytes_lost, 16 * page);
    for (PhysicalHandle handle : pages) backend->release(handle);
    const LeakReport report = leaks.check();
    EXPECT_TRUE(report.clean()) << report.describe();
}

}  // namespace
}  // namespace vtpage
