#include "streaming/streamer/request_intake.hpp"

#include <algorithm>

#include "base/test_points.hpp"

namespace vtpage::vt::streamer_detail {

StreamRequestResult RequestIntake::request(std::span<const PageRequest> requests) {
    std::vector<TextureId> owners;
    const std::vector<PendingKey> keys = keys_of(requests, owners);
    StreamRequestResult result;
    TouchedPages touched;
    const FrameId frame = parts_.table.current_frame();
    const std::size_t budget = parts_.table.budget_pages();
    TraceRecorder* const trace = trace::active();
    const std::int64_t trace_start = trace ? trace->now() : 0;
    std::int64_t trace_queued = 0;
    const std::vector<PageIndex> traced =
        admit(keys, owners, frame, budget, result, touched, trace, trace_queued);
    for (PageIndex page : traced) {
        trace->complete("page", "request", trace_start, trace_queued,
                        {.page = page, .frame = frame});
    }
    if (result.queued > 0) parts_.book.notify_workers();
    if (!touched.pages.empty()) keep_touched(touched, result);
    return result;
}

std::vector<PendingKey> RequestIntake::keys_of(std::span<const PageRequest> requests,
                                               std::vector<TextureId>& owners) const {
    std::vector<PendingKey> keys;
    keys.reserve(requests.size());
    owners.reserve(requests.size());
    for (const PageRequest& request : requests) {
        auto owner = parts_.textures.find(request.page);
        if (!owner) {
            throw Error(Errc::out_of_range, "Streamer::request", "the page belongs to no texture",
                        detail::concat("page=", request.page));
        }
        keys.push_back(
            {owner->position.mip, std::max<std::uint32_t>(request.count, 1), 0, request.page});
        owners.push_back(owner->texture);
    }
    return keys;
}

std::vector<PageIndex> RequestIntake::admit(const std::vector<PendingKey>& keys,
                                            const std::vector<TextureId>& owners, FrameId frame,
                                            std::size_t budget, StreamRequestResult& result,
                                            TouchedPages& touched, TraceRecorder* trace,
                                            std::int64_t& queued_at) {
    std::vector<PageIndex> traced;
    const RequestBook::Lock lock = parts_.book.lock();
    RecentDemand& demand = parts_.book.demand(lock);
    // Every page of the request asked for first: whether the view is over budget counts them.
    std::vector<std::uint8_t> whole(keys.size()), refault(keys.size());
    bool any_refault = false;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        whole[i] = whole_page_nolock(lock, owners[i], keys[i].mip);
        refault[i] = whole[i] && demand.asked(keys[i].page, frame);
        any_refault = any_refault || refault[i];
    }
    std::size_t free = 0;
    bool over = false;
    if (any_refault || demand.held_pages() > 0) {
        free = free_pages_nolock(lock, budget);
        over = demand.pages(frame) > free;
    }
    if (demand.held_pages() > 0) demand.fits(!over, frame, free);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (refault[i]) ++parts_.book.stats(lock).refaulted_pages;
        if (whole[i] && held_back_nolock(lock, keys[i].page, refault[i], frame, over, free))
            continue;
        if (admit_nolock(lock, keys[i], frame, result, touched) && trace)
            traced.push_back(keys[i].page);
    }
    // Before a worker can take them: a page's request precedes its commit.
    if (trace) queued_at = trace->now();
    return traced;
}

std::size_t RequestIntake::free_pages_nolock(const RequestBook::Lock& lock,
                                             std::size_t budget) const {
    const std::size_t pinned = parts_.book.tails(lock).size() + parts_.placement.host_count();
    return budget - std::min(budget, pinned);
}

bool RequestIntake::held_back_nolock(const RequestBook::Lock& lock, PageIndex page, bool refault,
                                     FrameId frame, bool over_budget, std::size_t free_pages) {
    RecentDemand& demand = parts_.book.demand(lock);
    StreamerStatistics& stats = parts_.book.stats(lock);
    if (refault && parts_.refault_hold_frames > 0 && over_budget) {
        demand.hold(page, frame, parts_.refault_hold_frames, free_pages);
        ++stats.held_pages;
    }
    if (demand.held_pages() == 0 || !demand.held(page, frame)) return false;
    // Read or being read again after all (asked before the hold): not held back.
    if (parts_.book.find_ready(lock, page) || parts_.book.in_flight(lock, page)) return false;
    ++stats.held_requests;
    return true;
}

// Counts the request and queues it, unless its page is ready (then touched, to keep it for
// this frame) or in flight (then asked again). True when newly queued.
bool RequestIntake::admit_nolock(const RequestBook::Lock& lock, PendingKey key, FrameId frame,
                                 StreamRequestResult& result, TouchedPages& touched) {
    RequestBook& book = parts_.book;
    key.asked_in = frame;
    ++book.stats(lock).requests;
    if (const StreamedPage* ready = book.find_ready(lock, key.page)) {
        ++result.ready;
        // A packed level is kept for this frame by the streamer; a packed tail is pinned in
        // another texture's tail page, with nothing of its own to keep.
        if (ready->packed()) {
            parts_.placement.touch(key.page, frame);
            return false;
        }
        touched.pages.push_back(key.page);
        touched.keys.push_back(key);
        touched.generations.push_back(ready->generation);
        return false;
    }
    if (book.in_flight(lock, key.page)) {
        book.ask_again(lock, key.page, frame);
        ++result.already_queued;
        return false;
    }
    bool queued = false;
    book.queue(lock, key, result, queued);
    return queued;
}

// Whether the streamer streams this level of the texture a page at a time (not packed with
// others' levels): what counts toward the view's recent pages. Known per texture once, as
// textures never change and are never removed.
bool RequestIntake::whole_page_nolock(const RequestBook::Lock&, TextureId texture,
                                      std::uint32_t mip) {
    if (!parts_.placement.enabled()) return true;
    if (texture >= packed_mips_.size()) packed_mips_.resize(texture + 1, unknown_mips);
    std::uint32_t& packed = packed_mips_[texture];
    if (packed == unknown_mips) {
        const TextureLayout layout = parts_.textures.layout(texture);
        packed = 0;
        for (std::uint32_t m = 0; m < layout.mip_count && m < 32; ++m) {
            if (PackedLevelPool::packable(layout, m)) packed |= 1u << m;
        }
    }
    return mip >= 32 || (packed & (1u << mip)) == 0;
}

// Keeps the touched pages from eviction until this frame completes. A page evicted since we
// looked (its evicted event is on its way) was queued by the table instead: take it out of the
// table's queue and into ours, so that the request is not lost.
void RequestIntake::keep_touched(const TouchedPages& touched, StreamRequestResult& result) {
    VTPAGE_TEST_POINT("streamer.request.before_touch");
    const RequestResult touch = parts_.table.request(touched.pages);
    if (touch.queued == 0 && touch.already_queued == 0) return;
    parts_.table.cancel(touched.pages);
    std::size_t requeued = 0;
    for (std::size_t i = 0; i < touched.keys.size(); ++i) {
        if (parts_.table.lookup(touched.keys[i].page)) continue;
        VTPAGE_TEST_POINT("streamer.request.touched_page_gone");
        const RequestBook::Lock lock = parts_.book.lock();
        if (!requeue_gone_nolock(lock, touched.keys[i], touched.generations[i])) continue;
        --result.ready;
        ++result.queued;
        ++requeued;
    }
    if (requeued > 0) parts_.book.notify_workers();
}

bool RequestIntake::requeue_gone_nolock(const RequestBook::Lock& lock, const PendingKey& key,
                                        std::uint64_t generation) {
    RequestBook& book = parts_.book;
    // Only the entry seen above is stale: another thread may have committed and filled the
    // page again since, and its entry stays.
    book.unready(lock, key.page, generation);
    if (book.find_ready(lock, key.page)) return false;
    if (book.is_pending(lock, key.page) || book.in_flight(lock, key.page)) return false;
    book.requeue_taken(lock, key);
    return true;
}

}  // namespace vtpage::vt::streamer_detail
