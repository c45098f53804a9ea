// A sparse array over a huge page range, as an OS page table keeps it: a directory of fixed-size
// leaves, each allocated on first write. 64 TiB of 2 MiB pages is 32 Mi entries; only the
// leaves that hold a set entry cost memory.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace vtpage::core_detail {

template <typename Entry, std::size_t LeafBits = 12>
class PageDirectory {
public:
    static constexpr std::size_t leaf_size = std::size_t(1) << LeafBits;

    explicit PageDirectory(std::uint64_t page_count)
        : leaves_((page_count + leaf_size - 1) / leaf_size) {}

    // The entry, or a default-constructed one where nothing was set.
    Entry get(std::uint64_t page) const {
        const auto& leaf = leaves_[page >> LeafBits];
        return leaf ? (*leaf)[page & (leaf_size - 1)] : Entry{};
    }
    Entry& at(std::uint64_t page) {
        auto& leaf = leaves_[page >> LeafBits];
        if (!leaf) leaf = std::make_unique<std::array<Entry, leaf_size>>();
        return (*leaf)[page & (leaf_size - 1)];
    }

    // Calls visit(page, entry) for every entry that differs from Entry{}, skipping empty leaves.
    template <typename Visit>
    void for_each_set(Visit visit) const {
        for (std::size_t leaf = 0; leaf < leaves_.size(); ++leaf) {
            if (!leaves_[leaf]) continue;
            for (std::size_t i = 0; i < leaf_size; ++i) {
                const Entry& entry = (*leaves_[leaf])[i];
                if (!(entry == Entry{})) visit(std::uint64_t(leaf * leaf_size + i), entry);
            }
        }
    }

private:
    std::vector<std::unique_ptr<std::array<Entry, leaf_size>>> leaves_;
};

}  // namespace vtpage::core_detail
