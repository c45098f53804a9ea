#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>

#include "../support/backend_fixture.hpp"
#include "../support/leak_guard.hpp"
#include "vtpage/backend/fault_injecting_backend.hpp"
#include "vtpage/core/virtual_region.hpp"

namespace vtpage {
namespace {

class VirtualRegionTest : public test::LeakCheckedBackendTest {
protected:
    std::vector<PhysicalHandle> create(std::size_t count) {
        std::vector<PhysicalHandle> handles;
        for (std::size_t i = 0; i < count; ++i) handles.push_back(backend_->create(page_));
        return handles;
    }
    void release(const std::vector<PhysicalHandle>& handles) {
        for (auto handle : handles) backend_->release(handle);
    }
};

TEST_P(VirtualRegionTest, ReservesAHugeRangeCutIntoPages) {
    VirtualRegion region(*backend_, {test::huge_reservation_bytes});
    EXPECT_EQ(region.page_size(), page_);
    EXPECT_EQ(region.page_count(), test::huge_reservation_bytes / page_);
    EXPECT_EQ(region.address_of(3), region.base() + 3 * page_);
    EXPECT_EQ(region.page_of(region.base() + 3 * page_ + 17), 3u);
    EXPECT_THROW(region.address_of(region.page_count()), Error);
    EXPECT_FALSE(region.is_committed(region.page_count() - 1));
}

// Sizes that round up past the address space are refused as what they are: rounding up
// once wrapped SIZE_MAX around to "reserve(size=0)".
TEST_P(VirtualRegionTest, ASizeBeyondTheAddressSpaceIsNamedAsItIs) {
    for (const std::size_t size : {SIZE_MAX, SIZE_MAX - page_ + 2}) {
        try {
            VirtualRegion region(*backend_, {size});
            ADD_FAILURE() << "no error for size " << size;
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::invalid_argument) << error.what();
            EXPECT_EQ(error.operation(), "VirtualRegion") << error.what();
            EXPECT_NE(error.arguments().find("size=" + std::to_string(size)), std::string::npos)
                << error.what();
            EXPECT_EQ(std::string(error.what()).find("size=0"), std::string::npos) << error.what();
        }
    }
}

TEST_P(VirtualRegionTest, CommitsBatchesWithOneSetAccessPerRun) {
    VirtualRegion region(*backend_, {256 * page_});
    auto handles = create(6);
    // Two runs: 10..13 and 40..41, given out of order.
    std::vector<PagePlacement> batch{{12, handles[0]}, {10, handles[1]}, {41, handles[2]},
                                     {11, handles[3]}, {40, handles[4]}, {13, handles[5]}};
    region.commit(batch);
    auto stats = region.statistics();
    EXPECT_EQ(stats.maps, 6u);
    EXPECT_EQ(stats.set_access_calls, 2u);
    EXPECT_EQ(region.committed_count(), 6u);
    EXPECT_EQ(region.handle_at(41), handles[2]);
    std::uint32_t value = 0xfeed;
    backend_->write(region.address_of(13) + 8, &value, 4);
    std::uint32_t back = 0;
    backend_->read(&back, region.address_of(13) + 8, 4);
    EXPECT_EQ(back, value);
    std::vector<PageIndex> pages{41, 10, 12, 11, 13, 40};
    auto returned = region.decommit(pages);
    EXPECT_EQ(returned[0], handles[2]);         // in the order asked
    EXPECT_EQ(region.statistics().unmaps, 2u);  // one per run
    EXPECT_EQ(region.committed_count(), 0u);
    release(handles);
}

TEST_P(VirtualRegionTest, RefusesBadBatchesBeforeChangingAnything) {
    VirtualRegion region(*backend_, {16 * page_});
    auto handles = create(3);
    region.commit(5, handles[0]);
    std::vector<PagePlacement> twice{{1, handles[1]}, {1, handles[2]}};
    EXPECT_THROW(region.commit(twice), Error);
    std::vector<PagePlacement> over{{4, handles[1]}, {5, handles[2]}};
    try {
        region.commit(over);
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::already_mapped);
    }
    std::vector<PagePlacement> outside{{16, handles[1]}};
    try {
        region.commit(outside);
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_range);
    }
    EXPECT_EQ(region.committed_count(), 1u);
    EXPECT_FALSE(region.is_committed(4));
    std::vector<PageIndex> with_hole{5, 6};
    try {
        region.decommit(with_hole);
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::not_mapped);
    }
    EXPECT_TRUE(region.is_committed(5));
    std::vector<PageIndex> uncommitted{7};
    EXPECT_THROW(region.protect(uncommitted, Access::read), Error);
    region.decommit(5);
    try {
        region.decommit(5);  // double decommit
        FAIL();
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::not_mapped);
    }
    release(handles);
}

TEST_P(VirtualRegionTest, ProtectChangesAccessOfCommittedPages) {
    VirtualRegion region(*backend_, {8 * page_});
    auto handles = create(2);
    std::vector<PagePlacement> batch{{2, handles[0]}, {3, handles[1]}};
    region.commit(batch);
    std::vector<PageIndex> pages{2, 3};
    region.protect(pages, Access::none);
    std::uint32_t word = 0;
    EXPECT_THROW(backend_->read(&word, region.address_of(2), 4), Error);
    region.protect(pages, Access::read_write);
    backend_->read(&word, region.address_of(3), 4);
    region.decommit(pages);
    release(handles);
}

TEST_P(VirtualRegionTest, DestructorUnmapsWhatIsLeft) {
    auto handles = create(2);
    {
        VirtualRegion region(*backend_, {8 * page_});
        std::vector<PagePlacement> batch{{0, handles[0]}, {7, handles[1]}};
        region.commit(batch);
    }
    EXPECT_EQ(backend_->live_resources().mappings, baseline_.mappings);
    release(handles);
}

INSTANTIATE_TEST_SUITE_P(Backends, VirtualRegionTest, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

// A failure in the middle of a batch undoes exactly what the batch did.
TEST(VirtualRegionRollback, FailedMapUndoesTheBatch) {
    HostBackend host;
    FaultInjectingBackend faulty(host);
    VirtualRegion region(faulty, {64_MiB});
    std::vector<PhysicalHandle> handles;
    for (int i = 0; i < 5; ++i) handles.push_back(faulty.create(2_MiB));
    const auto before = host.live_resources();
    faulty.add_rule({BackendOperation::map, Errc::out_of_memory, 4});  // the 4th map fails
    std::vector<PagePlacement> batch;
    for (int i = 0; i < 5; ++i) batch.push_back({PageIndex(i + 2), handles[i]});
    EXPECT_THROW(region.commit(batch), Error);
    EXPECT_EQ(host.live_resources(), before);
    EXPECT_EQ(region.committed_count(), 0u);
    faulty.clear_rules();
    region.commit(batch);  // the same batch works once the fault is gone
    EXPECT_EQ(region.committed_count(), 5u);
    std::vector<PageIndex> pages{2, 3, 4, 5, 6};
    region.decommit(pages);
    for (auto handle : handles) faulty.release(handle);
}

TEST(VirtualRegionRollback, FailedSetAccessUndoesTheBatch) {
    HostBackend host;
    FaultInjectingBackend faulty(host);
    VirtualRegion region(faulty, {64_MiB});
    std::vector<PhysicalHandle> handles;
    for (int i = 0; i < 4; ++i) handles.push_back(faulty.create(2_MiB));
    const auto before = host.live_resources();
    faulty.add_rule({BackendOperation::set_access, Errc::backend_failure, 2});  // second run
    std::vector<PagePlacement> batch{
        {1, handles[0]}, {2, handles[1]}, {9, handles[2]}, {10, handles[3]}};
    EXPECT_THROW(region.commit(batch), Error);
    EXPECT_EQ(host.live_resources(), before);
    for (auto handle : handles) faulty.release(handle);
}

TEST(VirtualRegionRollback, FailedUnmapLeavesRunsBeforeItDecommitted) {
    HostBackend host;
    FaultInjectingBackend faulty(host);
    VirtualRegion region(faulty, {64_MiB});
    std::vector<PhysicalHandle> handles;
    for (int i = 0; i < 3; ++i) handles.push_back(faulty.create(2_MiB));
    std::vector<PagePlacement> batch{{1, handles[0]}, {5, handles[1]}, {9, handles[2]}};
    region.commit(batch);
    faulty.add_rule({BackendOperation::unmap, Errc::backend_failure, 2});
    std::vector<PageIndex> pages{1, 5, 9};
    EXPECT_THROW(region.decommit(pages), Error);
    EXPECT_FALSE(region.is_committed(1));
    EXPECT_TRUE(region.is_committed(5));
    EXPECT_TRUE(region.is_committed(9));
    EXPECT_EQ(host.live_resources().mappings, 2u);
    faulty.clear_rules();
    std::vector<PageIndex> rest{5, 9};
    region.decommit(rest);
    for (auto handle : handles) faulty.release(handle);
}

// An undo whose unmap is refused leaves an orphaned mapping: not committed for the caller,
// unmapped at the next commit of the page (or any commit or decommit), never leaked.
TEST(VirtualRegionRollback, AnUndoThatCannotUnmapLeavesAnOrphanThatIsCleanedLater) {
    HostBackend host;
    FaultInjectingBackend faulty(host);
    std::vector<PhysicalHandle> handles;
    {
        VirtualRegion region(faulty, {64_MiB});
        for (int i = 0; i < 3; ++i) handles.push_back(faulty.create(2_MiB));
        // The third map fails, then both tries to unmap the first two (one run) fail.
        faulty.add_rule({BackendOperation::map, Errc::out_of_memory, 3});
        faulty.add_rule({BackendOperation::unmap, Errc::backend_failure, 1});
        faulty.add_rule({BackendOperation::unmap, Errc::backend_failure, 2});
        std::vector<PagePlacement> batch{{4, handles[0]}, {5, handles[1]}, {6, handles[2]}};
        EXPECT_THROW(region.commit(batch), Error);
        EXPECT_FALSE(region.is_committed(4));
        EXPECT_EQ(region.committed_count(), 0u);
        EXPECT_EQ(region.orphaned_count(), 2u);
        EXPECT_EQ(host.live_resources().mappings, 2u);  // still mapped, and known to be
        EXPECT_EQ(region.held_resources().mappings, 2u);
        // A commit of an orphaned page whose unmap is refused again fails with that error.
        faulty.add_rule({BackendOperation::unmap, Errc::busy, 3});
        try {
            region.commit(5, handles[1]);
            ADD_FAILURE() << "committed over an orphan that is still mapped";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::busy);
        }
        EXPECT_EQ(region.orphaned_count(), 2u);
        // The next try unmaps the orphans, then commits.
        region.commit(5, handles[1]);
        EXPECT_EQ(region.orphaned_count(), 0u);
        EXPECT_EQ(host.live_resources().mappings, 1u);
        // And destruction cleans up an orphan too.
        faulty.add_rule({BackendOperation::set_access, Errc::backend_failure, 2});
        faulty.add_rule({BackendOperation::unmap, Errc::backend_failure, 5});
        faulty.add_rule({BackendOperation::unmap, Errc::backend_failure, 6});
        EXPECT_THROW(region.commit(9, handles[2]), Error);
        EXPECT_EQ(region.orphaned_count(), 1u);
    }
    EXPECT_EQ(host.live_resources().mappings, 0u);
    EXPECT_EQ(host.live_resources().reservations, 0u);
    for (auto handle : handles) faulty.release(handle);
}

}  // namespace
}  // namespace vtpage
