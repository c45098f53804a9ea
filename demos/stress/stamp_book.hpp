// What the run knows of each page it stamped: the generation (and physical slot) whose stamps
// it wrote. Split into shards with a lock each; a worker holds the shards of its batch while it
// stamps or checks the pages, so that no two workers touch one page's bytes at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "vtpage/core/virtual_region.hpp"

namespace vtpage::stress {

class StampBook {
public:
    struct Entry {
        std::uint64_t generation = 0;
        std::uint32_t slot = 0;
    };

    explicit StampBook(std::size_t shards = 1024);

    // Locks the shards of these pages (in shard order: no deadlock) until destroyed.
    class Hold {
    public:
        Hold(StampBook& book, std::span<const PageIndex> pages);
        ~Hold();
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;
        // nullptr when the page was never stamped.
        const Entry* find(PageIndex page) const;
        void set(PageIndex page, Entry entry);

    private:
        StampBook& book_;
        std::vector<std::size_t> shards_;
    };

    std::size_t size() const;

private:
    struct Shard {
        mutable std::mutex mutex;
        std::unordered_map<PageIndex, Entry> entries;
    };
    std::size_t shard_of(PageIndex page) const noexcept;
    std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace vtpage::stress
