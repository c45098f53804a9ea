// The end of a batch: its filled pages become ready (their event reported while they are still
// pinned), failed ones are counted, and the pages are unpinned -- at once, or once the device
// work that writes them finished. One finisher per route of a batch item.
//
// No lock of its own: it takes the request book's (and, inside it, the level pool's).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/error_log.hpp"
#include "streaming/streamer/level_placement.hpp"
#include "streaming/streamer/request_book.hpp"
#include "streaming/streamer/streamer_events.hpp"

namespace vtpage::vt::streamer_detail {

class BatchFinisher {
public:
    struct Parts {
        PageTable& table;
        RequestBook& book;
        StreamerEvents& events;
        LevelPlacement& placement;
        ErrorLog& errors;
    };
    explicit BatchFinisher(Parts parts) : parts_(parts) {}

    // Finishes the items; `fence` is their device fills' and `fence_pending` says they still
    // run. Returns the pages to unpin once those have finished.
    std::vector<PageIndex> finish(std::span<BatchItem> items, std::uint64_t fence,
                                  bool fence_pending);
    // Unpins the pages and wakes the workers (a page's room is free).
    void unpin(std::span<const PageIndex> pages);

private:
    // What the items of a batch come to, gathered under the book's lock.
    struct Landed {
        std::vector<StreamedPage> ready;
        std::vector<PageIndex> unpin_now, unpin_later, asked_again;
        std::vector<std::pair<PageIndex, FrameId>> filled_levels;  // each with its asked_in
    };
    void land_nolock(const RequestBook::Lock& lock, BatchItem& item, std::uint64_t fence,
                     bool fence_pending, Landed& landed);
    // A page of its own; `wait_for_device` when work on a stream may still write it.
    void land_page_nolock(const RequestBook::Lock& lock, BatchItem& item, bool asked,
                          bool wait_for_device, std::uint64_t fence, Landed& landed);
    // A packed level: its host stays pinned; it is kept for the frame current when it is ready.
    void land_level_nolock(const RequestBook::Lock& lock, BatchItem& item, Landed& landed);
    void keep_asked_pages(const std::vector<PageIndex>& pages);
    void report_after_evictable(Landed& landed, FrameId frame);

    Parts parts_;
};

}  // namespace vtpage::vt::streamer_detail
