#include "streaming/streamer/batch_finisher.hpp"

#include "base/test_points.hpp"

namespace vtpage::vt::streamer_detail {

std::vector<PageIndex> BatchFinisher::finish(std::span<BatchItem> items, std::uint64_t fence,
                                             bool fence_pending) {
    Landed landed;
    const FrameId frame = parts_.table.current_frame();
    // The defect switch takes the ready ticket only once the pages are evictable, so that an
    // eviction can be reported before the ready it follows.
    if (VTPAGE_TEST_SWITCH("defect.ready_reported_after_pages_evictable")) {
        {
            const RequestBook::Lock lock = parts_.book.lock();
            for (BatchItem& item : items) land_nolock(lock, item, fence, fence_pending, landed);
            parts_.book.begin_report(lock);
        }
        report_after_evictable(landed, frame);
        return std::move(landed.unpin_later);
    }
    StreamerEvents::Ticket ticket;
    {
        const RequestBook::Lock lock = parts_.book.lock();
        for (BatchItem& item : items) land_nolock(lock, item, fence, fence_pending, landed);
        parts_.book.begin_report(lock);
        ticket = parts_.events.take();
    }
    // Ready is reported while the pages are still pinned, and before the packed levels are
    // evictable: no eviction, nor another level in the same place, can be reported first.
    parts_.events.emit(ticket, StreamerEventKind::ready, landed.ready);
    keep_asked_pages(landed.asked_again);
    unpin(landed.unpin_now);
    const RequestBook::Lock lock = parts_.book.lock();
    for (const auto& [level, asked_in] : landed.filled_levels) {
        parts_.placement.filled(level, frame, asked_in);
    }
    parts_.book.end_report(lock);
    return std::move(landed.unpin_later);
}

// The defect's order: pages unpinned and levels evictable before their ready ticket is taken.
void BatchFinisher::report_after_evictable(Landed& landed, FrameId frame) {
    keep_asked_pages(landed.asked_again);
    unpin(landed.unpin_now);
    {
        const RequestBook::Lock lock = parts_.book.lock();
        for (const auto& [level, asked_in] : landed.filled_levels) {
            parts_.placement.filled(level, frame, asked_in);
        }
    }
    StreamerEvents::Ticket ticket;
    {
        const RequestBook::Lock lock = parts_.book.lock();
        ticket = parts_.events.take();
    }
    parts_.events.emit(ticket, StreamerEventKind::ready, landed.ready);
    const RequestBook::Lock lock = parts_.book.lock();
    parts_.book.end_report(lock);
}

void BatchFinisher::land_nolock(const RequestBook::Lock& lock, BatchItem& item, std::uint64_t fence,
                                bool fence_pending, Landed& landed) {
    const bool asked = parts_.book.leave_flight(lock, item.mapping.page, item.key.asked_in);
    switch (item.route) {
        case BatchRoute::host_fill:
            land_page_nolock(lock, item, asked, false, fence, landed);
            break;
        case BatchRoute::device_fill:
            land_page_nolock(lock, item, asked, fence_pending, fence, landed);
            break;
        case BatchRoute::stored_page:
            // A packed level read from a file lands as a level.
            if (item.place) {
                land_level_nolock(lock, item, landed);
            } else {
                land_page_nolock(lock, item, asked, item.device_copy && fence_pending, fence,
                                 landed);
            }
            break;
        case BatchRoute::packed_level:
            land_level_nolock(lock, item, landed);
            break;
    }
}

void BatchFinisher::land_page_nolock(const RequestBook::Lock& lock, BatchItem& item, bool asked,
                                     bool wait_for_device, std::uint64_t fence, Landed& landed) {
    // A failed call of a batch may have enqueued work into the page before it failed: the page
    // waits for the batch like its filled neighbours.
    (wait_for_device ? landed.unpin_later : landed.unpin_now).push_back(item.mapping.page);
    StreamerStatistics& stats = parts_.book.stats(lock);
    if (item.failed()) {
        ++stats.failed_pages;
        return;
    }
    if (wait_for_device) item.page.fence = fence;
    if (asked) landed.asked_again.push_back(item.mapping.page);
    parts_.book.set_ready(lock, item.mapping.page, item.page);
    landed.ready.push_back(item.page);
    ++stats.pages_filled;
    stats.bytes_filled += item.page.bytes;
}

void BatchFinisher::land_level_nolock(const RequestBook::Lock& lock, BatchItem& item,
                                      Landed& landed) {
    StreamerStatistics& stats = parts_.book.stats(lock);
    if (item.failed()) {
        ++stats.failed_pages;
        parts_.placement.release(item.mapping.page);
        return;
    }
    landed.filled_levels.emplace_back(item.mapping.page, item.key.asked_in);
    parts_.book.set_ready(lock, item.mapping.page, item.page);
    landed.ready.push_back(item.page);
    ++stats.pages_filled;
    stats.bytes_filled += item.page.bytes;
}

// Still pinned: the frame that asked again now holds them until it completes.
void BatchFinisher::keep_asked_pages(const std::vector<PageIndex>& pages) {
    if (pages.empty()) return;
    try {
        parts_.table.request(pages);
    } catch (...) {
        parts_.errors.record(std::current_exception());
    }
}

void BatchFinisher::unpin(std::span<const PageIndex> pages) {
    if (pages.empty()) return;
    try {
        parts_.table.unpin(pages);
    } catch (...) {
        parts_.errors.record(std::current_exception());
    }
    parts_.book.wake();
}

}  // namespace vtpage::vt::streamer_detail
