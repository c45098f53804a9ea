// Compressible pages: asked for with PageOptions::compressible, granted or not by the driver,
// and the grant read back from the page (also after an fd export into another process) and
// reported by the page pool and the page table. The host backend never grants compression.
#include <gtest/gtest.h>

#include <numeric>

#include "../support/backend_fixture.hpp"
#include "../support/child_process.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage {
namespace {

class Compression : public test::BackendTest {
protected:
    void SetUp() override {
        BackendTest::SetUp();
        if (IsSkipped()) return;
        granted_ = backend_->capabilities().compression;
    }
    bool granted_ = false;
};

TEST_P(Compression, TheGrantIsReadBackFromEachPage) {
    const PageOptions compressible{-1, true, true};
    EXPECT_EQ(backend_->granularity(compressible).minimum, page_);
    PhysicalHandle plain = backend_->create(page_);
    PhysicalHandle packed = backend_->create(page_, compressible);
    EXPECT_FALSE(backend_->is_compressed(plain));
    EXPECT_EQ(backend_->is_compressed(packed), granted_);
    if (GetParam() == "host") {
        EXPECT_FALSE(granted_);
    }
    // A compressible page holds data like any other.
    DeviceAddress address = backend_->reserve(page_);
    backend_->map(address, page_, packed);
    backend_->set_access(address, page_, Access::read_write);
    std::vector<std::uint32_t> words(page_ / 4), back(page_ / 4);
    std::iota(words.begin(), words.end(), 7u);
    backend_->write(address, words.data(), page_);
    backend_->read(back.data(), address, page_);
    EXPECT_EQ(back, words);
    backend_->unmap(address, page_);
    backend_->release(plain);
    backend_->release(packed);
    backend_->free_reservation(address, page_);
}

TEST_P(Compression, PoolAndTableReportTheGrantedPages) {
    PageTableSettings settings;
    settings.region_size = 64 * page_;
    settings.budget_bytes = 8 * page_;
    settings.pool.page_options.compressible = true;
    PageTable table(*backend_, settings);
    table.commit(std::vector<PageIndex>{1, 2, 3, 4, 5});
    auto stats = table.statistics();
    EXPECT_TRUE(stats.pool.compression_requested);
    EXPECT_EQ(stats.pool.compressed_pages, granted_ ? 5u : 0u);
    table.evict(std::vector<PageIndex>{1, 2});  // idle in the pool: still held, still counted
    EXPECT_EQ(table.pool().statistics().compressed_pages, granted_ ? 5u : 0u);
    table.shutdown();  // gives every page back to the driver
    EXPECT_EQ(table.pool().statistics().compressed_pages, 0u);

    PagePool plain(*backend_);
    plain.release(plain.acquire(2));
    EXPECT_FALSE(plain.statistics().compression_requested);
    EXPECT_EQ(plain.statistics().compressed_pages, 0u);
}

// Imports the page on descriptor 3 and prints whether it is compressed and its first word.
int import_compressed_child(const std::vector<std::string>& arguments) {
    std::string reason;
    auto backend = test::try_make_backend(arguments.at(0), reason);
    if (!backend) return 2;
    const std::size_t page = backend->granularity().minimum;
    PhysicalHandle handle = backend->import_fd(3, page);
    DeviceAddress address = backend->reserve(page);
    backend->map(address, page, handle);
    backend->set_access(address, page, Access::read);
    std::uint32_t word = 0;
    backend->read(&word, address, 4);
    std::printf("imported compressed=%d word=%u\n", backend->is_compressed(handle) ? 1 : 0, word);
    backend->unmap(address, page);
    backend->release(handle);
    backend->free_reservation(address, page);
    return 0;
}
VTPAGE_CHILD_MODE("import-compressed", import_compressed_child);

TEST_P(Compression, TheGrantTravelsWithTheFd) {
    if (!backend_->capabilities().fd_handles) GTEST_SKIP() << "no fd export here";
    PhysicalHandle packed = backend_->create(page_, PageOptions{-1, true, true});
    DeviceAddress address = backend_->reserve(page_);
    backend_->map(address, page_, packed);
    backend_->set_access(address, page_, Access::read_write);
    const std::uint32_t word = 0xC0FFEE;
    backend_->write(address, &word, 4);
    UniqueFd fd = backend_->export_fd(packed);
    auto child = test::run_child("import-compressed", {GetParam()}, fd.get());
    EXPECT_EQ(child.exit_code, 0) << child.output;
    EXPECT_NE(child.output.find(std::string("imported compressed=") + (granted_ ? "1" : "0") +
                                " word=" + std::to_string(word)),
              std::string::npos)
        << child.output;
    backend_->unmap(address, page_);
    backend_->release(packed);
    backend_->free_reservation(address, page_);
}

INSTANTIATE_TEST_SUITE_P(Backends, Compression, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
