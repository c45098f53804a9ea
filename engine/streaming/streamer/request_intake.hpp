// The streamer's requests as they come in: each page's key (its priority), then in one critical
// section of the request book each is counted and either touched (ready: kept for this frame),
// asked again (in flight) or queued. Ready pages are then kept from eviction through the page
// table; one evicted meanwhile is queued again, so that no request is lost.
//
// No lock of its own: it takes the request book's (and, inside it, the level pool's to touch a
// packed level), never while calling the page table.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/level_placement.hpp"
#include "streaming/streamer/request_book.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt::streamer_detail {

class RequestIntake {
public:
    struct Parts {
        PageTable& table;
        const TextureSet& textures;
        RequestBook& book;
        LevelPlacement& placement;
        FrameId refault_hold_frames = 0;  // StreamerSettings::refault_hold_frames
    };
    explicit RequestIntake(Parts parts) : parts_(parts) {}

    // Streamer::request: out_of_range for a page of no texture (nothing queued then).
    StreamRequestResult request(std::span<const PageRequest> requests);

private:
    // Ready pages a request touched: kept for this frame through the table.
    struct TouchedPages {
        std::vector<PageIndex> pages;
        std::vector<PendingKey> keys;
        std::vector<std::uint64_t> generations;  // of the ready entries looked at
    };

    // `owners`: each key's texture.
    std::vector<PendingKey> keys_of(std::span<const PageRequest> requests,
                                    std::vector<TextureId>& owners) const;
    bool whole_page_nolock(const RequestBook::Lock& lock, TextureId texture, std::uint32_t mip);
    // Newly queued pages (traced when a trace is recorded); `queued_at`: the trace's time once
    // queued, before a worker can take them.
    // `budget`: the table's budget in pages, read before the book's lock is taken.
    std::vector<PageIndex> admit(const std::vector<PendingKey>& keys,
                                 const std::vector<TextureId>& owners, FrameId frame,
                                 std::size_t budget, StreamRequestResult& result,
                                 TouchedPages& touched, TraceRecorder* trace,
                                 std::int64_t& queued_at);
    // The pages `budget` holds beside the pinned ones (as Streamer::budget_demand counts them).
    std::size_t free_pages_nolock(const RequestBook::Lock& lock, std::size_t budget) const;
    // Whether the request for `page` is held back (RecentDemand::hold): a refault while the
    // view is over budget (`free_pages` beside the pinned ones) holds it.
    bool held_back_nolock(const RequestBook::Lock& lock, PageIndex page, bool refault,
                          FrameId frame, bool over_budget, std::size_t free_pages);
    bool admit_nolock(const RequestBook::Lock& lock, PendingKey key, FrameId frame,
                      StreamRequestResult& result, TouchedPages& touched);
    void keep_touched(const TouchedPages& touched, StreamRequestResult& result);
    bool requeue_gone_nolock(const RequestBook::Lock& lock, const PendingKey& key,
                             std::uint64_t generation);

    Parts parts_;
    // Per texture, a bit for each level packed with others' (PackedLevelPool::packable), or
    // unknown_mips before its first request. Guarded by the request book's lock.
    static constexpr std::uint32_t unknown_mips = ~0u;
    std::vector<std::uint32_t> packed_mips_;
};

}  // namespace vtpage::vt::streamer_detail
