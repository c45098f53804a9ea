#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vtpage/base/process_resources.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage {
namespace {

TEST(ProcessResources, NewDescriptorsAndMappingsShowAsGrowth) {
    const ProcessResources before = snapshot_process_resources();
    EXPECT_FALSE(before.descriptors.empty());  // stdin, stdout, stderr at least
    EXPECT_FALSE(before.mappings.empty());
    // Reading /proc opens nothing that stays open (the heap may grow: snapshots allocate).
    EXPECT_TRUE(growth_between(before, snapshot_process_resources()).descriptors.empty());

    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    const std::size_t size = 3 << 20;
    void* mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapping, MAP_FAILED);

    const ProcessResourceGrowth growth = growth_between(before, snapshot_process_resources());
    ASSERT_EQ(growth.descriptors.size(), 2u);
    EXPECT_EQ(growth.descriptors[0].fd, fds[0]);
    EXPECT_NE(growth.descriptors[0].target.find("pipe:"), std::string::npos);
    bool found = false;
    for (const MappedRange& range : growth.mappings) {
        found = found || (range.start <= reinterpret_cast<std::uint64_t>(mapping) &&
                          range.end >= reinterpret_cast<std::uint64_t>(mapping) + size);
    }
    EXPECT_TRUE(found) << describe(growth);
    EXPECT_GE(growth.mapped_bytes, size);
    EXPECT_NE(describe(growth).find("2 new descriptor(s)"), std::string::npos);

    munmap(mapping, size);
    read_end.reset();
    write_end.reset();
    const ProcessResourceGrowth after = growth_between(before, snapshot_process_resources());
    EXPECT_TRUE(after.descriptors.empty()) << describe(after);
    for (const MappedRange& range : after.mappings) {
        EXPECT_FALSE(range.start < reinterpret_cast<std::uint64_t>(mapping) + size &&
                     reinterpret_cast<std::uint64_t>(mapping) < range.end)
            << describe(after);
    }
}

TEST(ProcessResources, GrowthCountsOnlyWhatIsNew) {
    ProcessResources before;
    before.descriptors = {{0, "/dev/null"}, {3, "/tmp/a"}};
    before.mappings = {{0x1000, 0x5000, "rw-p", "[heap]"}, {0x10000, 0x20000, "---p", ""}};
    ProcessResources after;
    after.descriptors = {{0, "/dev/null"}, {3, "/tmp/b"}, {4, "socket:[1]"}};
    after.mappings = {{0x1000, 0x9000, "rw-p", "[heap]"},  // grown by 0x4000
                      {0x10000, 0x12000, "rw-p", ""},      // made accessible: new
                      {0x12000, 0x20000, "---p", ""}};     // the same as before
    const ProcessResourceGrowth growth = growth_between(before, after);
    ASSERT_EQ(growth.descriptors.size(), 2u);  // 3 points elsewhere, 4 is new
    EXPECT_EQ(growth.descriptors[0].target, "/tmp/b");
    ASSERT_EQ(growth.mappings.size(), 2u);
    EXPECT_EQ(growth.mappings[0].start, 0x5000u);
    EXPECT_EQ(growth.mappings[0].end, 0x9000u);
    EXPECT_EQ(growth.mappings[1].start, 0x10000u);
    EXPECT_EQ(growth.mapped_bytes, 0x4000u + 0x2000u);
}

}  // namespace
}  // namespace vtpage
