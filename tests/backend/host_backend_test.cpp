// What only the host backend does: real CPU access through the mappings, enforced by the MMU.
#include <gtest/gtest.h>

#include <cstring>

#include "vtpage/backend/host_backend.hpp"

namespace vtpage {
namespace {

struct HostPage {
    explicit HostPage(HostBackend& b) : backend(b) {
        address = backend.reserve(2_MiB);
        page = backend.create(2_MiB);
        backend.map(address, 2_MiB, page);
    }
    ~HostPage() {
        backend.unmap(address, 2_MiB);
        backend.release(page);
        backend.free_reservation(address, 2_MiB);
    }
    volatile std::uint32_t* words() const { return reinterpret_cast<std::uint32_t*>(address); }
    HostBackend& backend;
    DeviceAddress address = 0;
    PhysicalHandle page;
};

TEST(HostBackend, MappingsAreRealMemory) {
    HostBackend backend;
    HostPage page(backend);
    backend.set_access(page.address, 2_MiB, Access::read_write);
    page.words()[1000] = 0xabcdef;
    std::uint32_t back = 0;
    backend.read(&back, page.address + 4000, 4);
    EXPECT_EQ(back, 0xabcdefu);
}

TEST(HostBackendDeathTest, WriteToReadOnlyPageDies) {
    HostBackend backend;
    HostPage page(backend);
    backend.set_access(page.address, 2_MiB, Access::read);
    EXPECT_EQ(page.words()[5], 0u);  // reading is allowed
    EXPECT_DEATH(page.words()[5] = 1, "");
}

TEST(HostBackendDeathTest, ReadOfInaccessiblePageDies) {
    HostBackend backend;
    HostPage page(backend);
    EXPECT_DEATH((void)page.words()[5], "");  // a fresh mapping has no access
    backend.set_access(page.address, 2_MiB, Access::read_write);
    backend.set_access(page.address, 2_MiB, Access::none);
    EXPECT_DEATH((void)page.words()[5], "");
}

TEST(HostBackendDeathTest, AccessAfterUnmapDies) {
    HostBackend backend;
    DeviceAddress address = backend.reserve(2_MiB);
    PhysicalHandle page = backend.create(2_MiB);
    backend.map(address, 2_MiB, page);
    backend.set_access(address, 2_MiB, Access::read_write);
    backend.unmap(address, 2_MiB);
    EXPECT_DEATH((void)reinterpret_cast<volatile std::uint32_t*>(address)[0], "");
    backend.release(page);
    backend.free_reservation(address, 2_MiB);
}

TEST(HostBackend, PhysicalLimitActsLikeDeviceMemory) {
    HostBackend backend(HostBackendSettings{2_MiB, 8_MiB});
    EXPECT_EQ(backend.memory_info().total, 8_MiB);
    std::vector<PhysicalHandle> pages;
    for (int i = 0; i < 4; ++i) pages.push_back(backend.create(2_MiB));
    EXPECT_EQ(backend.memory_info().free, 0u);
    try {
        backend.create(2_MiB);
        FAIL() << "a fifth page fit in an 8 MiB limit";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_memory);
    }
    backend.release(pages.back());
    pages.pop_back();
    pages.push_back(backend.create(2_MiB));  // released memory can be had again
    for (auto page : pages) backend.release(page);
    EXPECT_EQ(backend.memory_info().free, 8_MiB);
}

TEST(HostBackend, SmallerPageSizesWork) {
    HostBackend backend(HostBackendSettings{64_KiB});
    EXPECT_EQ(backend.granularity().minimum, 64_KiB);
    DeviceAddress address = backend.reserve(256_KiB);
    PhysicalHandle page = backend.create(64_KiB);
    backend.map(address + 64_KiB, 64_KiB, page);
    backend.set_access(address + 64_KiB, 64_KiB, Access::read_write);
    backend.unmap(address + 64_KiB, 64_KiB);
    backend.release(page);
    backend.free_reservation(address, 256_KiB);
}

TEST(HostBackend, BadPageSizeIsRefused) {
    try {
        HostBackend backend(HostBackendSettings{1000});
        FAIL() << "a 1000-byte page size was accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
    }
}

TEST(HostBackend, ImportOfANonPageFdIsRefused) {
    HostBackend backend;
    try {
        backend.import_fd(0, 2_MiB);  // stdin is no page
        FAIL() << "stdin was imported as a page";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_handle);
    }
}

}  // namespace
}  // namespace vtpage
