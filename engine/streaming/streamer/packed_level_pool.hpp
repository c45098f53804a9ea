// Where the streamer keeps coarse levels packed several to a page: the bookkeeping alone (no
// backend, no lock; the streamer holds its mutex around every call).
//
// A coarse level is a level of one texture that fits in one page with room to spare (RGBA8
// 2^15: mip 7 is 3 x 3 tiles, mip 8 is 2 x 2, of a page's 8 x 4). Unlike a mip tail it is
// requested and evicted, so the pages that hold coarse levels ("hosts") are shared by levels of
// many textures that come and go apart. Each host holds levels of one shape (format, tiles
// across, tiles down) at fixed places, found once per shape by first fit in the page's tile
// grid: any place a level of that shape left fits the next one.
//
// A level's tiles keep their places relative to each other: tile (x, y) of a level placed at
// tile k of its host is tile k + y * page_tiles_x + x there, so an indirection entry that points
// k tiles into the host finds every tile where the shaders look for it.
//
// Frame fences, as the page table keeps them for pages: a level used (requested or filled) in
// frame N is not evicted before frame N is complete, and the place it leaves is not given to
// another level before every frame begun when its eviction was reported has completed (the
// reuse rule, FrameFencedReuse: a frame in flight may still sample it through the entry its
// upload saw).
//
// Recency, apart from the fences: a level is as recent as the newest frame that asked for it
// (not the frame it was filled in, which for a request left waiting can be much later). A level
// asked for in frame N takes the place of one last wanted before N only: when every level of
// its shape was wanted in N or later, the view needs more than the places hold, and the level
// is superseded instead of evicting one the same view samples (and asks for again next frame,
// for ever). Frame 0 (no frame begun) has no recency: plain LRU.
//
// Giving hosts back (a lowered budget): a retired host takes no new level; its levels are
// evicted as their frames complete, and once all its places are free and ripe it is released
// (its index is reused by the next add_host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "streaming/streamer/page_rows.hpp"
#include "vtpage/core/frame_fenced_reuse.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt {

struct LevelShape {
    TileFormat format = TileFormat::rgba8;
    std::uint32_t tiles_x = 0;
    std::uint32_t tiles_y = 0;
    std::uint32_t stack = 0;  // TileStack::packed of a material stack's level; 0 for a texture
    auto operator<=>(const LevelShape&) const = default;
    // The tiles' shape: the format's, or the stack's.
    TileFormatInfo tile_format() const {
        return stack != 0 ? stack_tile_format_info(TileStack{stack}) : tile_format_info(format);
    }
};

// Where a level was placed: its host (an index of the pool's hosts) and its bytes in it.
struct LevelPlace {
    std::size_t host = 0;
    std::uint32_t first_tile = 0;
    std::uint64_t offset = 0;  // bytes from the host page's start
    std::uint64_t bytes = 0;   // from offset to the end of the level's last tile
    PageRows rows;             // the level's tile rows, in its own page and from offset on
};

class PackedLevelPool {
public:
    // The shape of `mip` when it is worth packing (a single-page level, two or more of which fit
    // one page; a tile level's pages, a tile each); nullopt otherwise.
    static std::optional<LevelShape> packable(const TextureLayout& layout, std::uint32_t mip);
    // The first tiles of the places of a shape's levels in a page, by first fit.
    static std::vector<std::uint32_t> places_of(LevelShape shape);

    // A free place for `level` of `shape` whose frames are complete (reserved for it until
    // filled() or release()); nullopt when there is none.
    std::optional<LevelPlace> take(PageIndex level, LevelShape shape, FrameId completed);
    struct Eviction {
        std::optional<PageIndex> victim;
        // No level of the shape was last wanted before `asked_in`: `level` gets no place.
        bool superseded = false;
    };
    // Evicts the least recently wanted resident level of `shape` whose frames are complete and
    // that was last wanted before `asked_in` (see above), if any, to make room for `level`. Its
    // place is not free for take() until evictions_reported(): report the eviction first (clear
    // its entry), then say which frame was current once it was reported. While a place evicted
    // for `level` waits for its frames, nothing more is evicted for it (each try would otherwise
    // take one more level).
    Eviction evict(LevelShape shape, FrameId completed, PageIndex level, FrameId asked_in);
    void evictions_reported(FrameId current);
    // A new host page of `shape`, all its places free; returns its index (a released one's
    // first).
    std::size_t add_host(LevelShape shape);
    // Takes the host with the fewest levels out of use (see above); false when none is left.
    bool retire_host();
    // Evicts the levels of retired hosts whose frames are complete (report them, then
    // evictions_reported, as for evict()).
    std::vector<PageIndex> evict_retired(FrameId completed);
    // A retired host whose places are all free and ripe: released, its index returned.
    std::optional<std::size_t> release_retired(FrameId completed);
    // Hosts in use (not retired).
    std::size_t active_hosts() const noexcept { return active_; }
    // The index the next add_host will return.
    std::size_t next_host() const noexcept {
        return released_.empty() ? hosts_.size() : released_.back();
    }
    // The indices of the hosts not released (retired ones included).
    std::vector<std::size_t> hosts_held() const;
    // The level's bytes are in place: evictable from now on, visible from `frame` (its fence),
    // wanted in `asked_in` (its recency).
    void filled(PageIndex level, FrameId frame, FrameId asked_in);
    // Used in `frame` (a request): kept from eviction until that frame is complete.
    void touch(PageIndex level, FrameId frame);
    // A level whose fill failed: its place is free at once (it was never visible). Resident
    // levels leave only by eviction.
    void release(PageIndex level);

    std::optional<LevelPlace> place_of(PageIndex level) const;
    bool holds(PageIndex level) const { return levels_.count(level) != 0; }
    bool has_host(LevelShape shape) const {
        auto found = shapes_.find(shape);
        return found != shapes_.end() && found->second.hosts > 0;
    }
    std::size_t host_count() const noexcept { return hosts_.size() - released_.size(); }
    std::size_t resident_levels() const noexcept { return resident_; }

private:
    struct Place {
        std::size_t host = 0;
        std::uint32_t index = 0;  // of its shape's places
    };
    struct Level {
        LevelShape shape;
        Place place;
        FrameId fence = 0;      // the newest frame that may sample it: evictable once complete
        FrameId wanted_in = 0;  // the newest frame that asked for it: its recency
        bool resident = false;  // filled: in its shape's LRU
    };
    struct Host {
        LevelShape shape;
        std::size_t levels = 0;  // placed in it (reserved or resident)
        bool retired = false;
        bool released = false;
    };
    struct Shape {
        std::vector<std::uint32_t> first_tiles;  // places_of(shape)
        std::size_t hosts = 0;
        // Places no level holds: new ones at once, evicted ones once their frames are complete.
        FrameFencedReuse<Place> free;
        std::set<std::pair<FrameId, PageIndex>> lru;  // resident levels by wanted_in
    };

    LevelPlace describe(LevelShape shape, const Shape& entry, const Place& place) const;
    Shape& shape_entry(LevelShape shape);

    std::map<LevelShape, Shape> shapes_;
    std::vector<Host> hosts_;
    std::vector<std::size_t> released_;  // indices for add_host to reuse
    std::size_t active_ = 0;
    std::unordered_map<PageIndex, Level> levels_;
    std::size_t resident_ = 0;
    // Levels for which a place was evicted, and the frame after which that place is ripe
    // (unreported until evictions_reported): cleared when they take a place.
    std::unordered_map<PageIndex, FrameId> evicted_for_;
};

}  // namespace vtpage::vt
