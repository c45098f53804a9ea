#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <thread>

#include "page_verifier.hpp"
#include "stamp_book.hpp"

namespace vtpage::stress {
namespace {

TEST(PageStamp, EveryFieldCounts) {
    const PageStamp base = make_stamp(7, 3, 4096);
    EXPECT_TRUE(same_stamp(base, make_stamp(7, 3, 4096)));
    EXPECT_FALSE(same_stamp(base, make_stamp(8, 3, 4096)));
    EXPECT_FALSE(same_stamp(base, make_stamp(7, 4, 4096)));
    EXPECT_FALSE(same_stamp(base, make_stamp(7, 3, 8192)));
    PageStamp forged = base;
    forged.generation = 4;  // the check word no longer fits
    EXPECT_FALSE(same_stamp(forged, make_stamp(7, 4, 4096)));
}

struct AlignedFree {
    void operator()(void* p) const { std::free(p); }
};

TEST(HostVerifier, StampsThenChecksAndCatchesSpoiledPages) {
    const StampLayout layout{64 * 1024, 4096};
    std::unique_ptr<unsigned char, AlignedFree> memory(
        static_cast<unsigned char*>(std::aligned_alloc(4096, 2 * layout.page_size)));
    const auto base = reinterpret_cast<std::uint64_t>(memory.get());
    auto verifier = make_host_verifier(layout);
    StampJob write[2] = {{base, 10, 1, 1, 0}, {base + layout.page_size, 11, 2, 1, 0}};
    StampMismatch first{};
    EXPECT_EQ(verifier->run(write, 2, first), 0u);
    StampJob check[2] = {{base, 10, 1, 0, 0}, {base + layout.page_size, 11, 2, 0, 0}};
    EXPECT_EQ(verifier->run(check, 2, first), 0u);
    // The second page read as the first (a wrong mapping) fails.
    StampJob swapped[1] = {{base + layout.page_size, 10, 1, 0, 0}};
    EXPECT_EQ(verifier->run(swapped, 1, first), 1u);
    EXPECT_EQ(first.found.page, 11u);
    EXPECT_EQ(first.found.generation, 2u);
    // One stamp spoiled in the middle of a page fails that page only.
    memory.get()[layout.page_size + 5 * 4096 + 8] ^= 1;
    EXPECT_EQ(verifier->run(check, 2, first), 1u);
    EXPECT_EQ(first.page, 11u);
    verifier->corrupt(base);
    EXPECT_EQ(verifier->run(check, 2, first), 2u);
}

TEST(StampBook, HoldsRememberAndDoNotDeadlock) {
    StampBook book(8);
    {
        const std::vector<PageIndex> pages{1, 2, 3};
        StampBook::Hold hold(book, pages);
        EXPECT_EQ(hold.find(2), nullptr);
        hold.set(2, {5, 9});
        ASSERT_NE(hold.find(2), nullptr);
        EXPECT_EQ(hold.find(2)->generation, 5u);
        EXPECT_EQ(hold.find(2)->slot, 9u);
    }
    EXPECT_EQ(book.size(), 1u);
    // Threads holding overlapping sets in different orders all finish.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&book, t] {
            for (int i = 0; i < 2000; ++i) {
                const std::vector<PageIndex> pages{PageIndex(i % 13), PageIndex((i * 7 + t) % 13),
                                                   PageIndex(t)};
                StampBook::Hold hold(book, pages);
                hold.set(PageIndex(t), {std::uint64_t(i), 0});
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(book.size(), 4u);  // pages 0 to 3 (page 2 was set before)
}

}  // namespace
}  // namespace vtpage::stress
