// Whole pages decoded from files, kept for the loads of rows that follow: the tiles of one
// stored page that a view asks for over several batches (tiles of a tile level) are read and
// decoded once while the page is kept. Least recently used first out, at most `capacity` pages.
// A page a decode thread decodes to keep is said to be on its way (begin_keep), so that loads
// of it wait for it instead of reading it again.
//
// Thread-safe: one mutex of its own, taken alone (the page loader calls find() with its own
// mutex held, and keep() without).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "vtpage/streaming/sources/tile_source.hpp"

namespace vtpage::vt::streamer_detail {

class DecodedPageCache {
public:
    using Page = std::shared_ptr<const std::vector<std::byte>>;  // page_bytes, decoded

    explicit DecodedPageCache(std::size_t capacity) : capacity_(capacity) {}

    struct Found {
        Page bytes;               // the page, when kept (it is then the most recent)
        bool on_its_way = false;  // not kept yet: a decode thread decodes it to keep it
    };

    std::size_t capacity() const noexcept { return capacity_; }
    // Page `page` of the source (its layout), kept or on its way.
    Found find(const TileSource* source, std::uint64_t page);
    // Says that the caller decodes the page to keep it, then calls keep() or abandon_keep().
    // False (nothing changed) when it is kept or on its way already, or nothing is kept.
    bool begin_keep(const TileSource* source, std::uint64_t page);
    // Keeps a page (the source is kept alive with it, so that its address names no other); it is
    // no longer on its way.
    void keep(std::shared_ptr<const TileSource> source, std::uint64_t page, Page bytes);
    // The page begun is not coming (its decode failed, or no memory to keep it).
    void abandon_keep(const TileSource* source, std::uint64_t page);
    std::uint64_t hits() const;

private:
    using Key = std::pair<const TileSource*, std::uint64_t>;
    struct Entry {
        Key key;
        std::shared_ptr<const TileSource> source;
        Page bytes;
    };

    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::list<Entry> recent_;                          // most recent first; guarded by mutex_
    std::map<Key, std::list<Entry>::iterator> index_;  // guarded by mutex_
    std::set<Key> on_its_way_;                         // guarded by mutex_
    std::uint64_t hits_ = 0;                           // guarded by mutex_
};

}  // namespace vtpage::vt::streamer_detail
