#include "streaming/streamer/commit_stage.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

CommitOutcome CommitStage::commit(std::vector<PendingKey>& keys,
                                  std::vector<PageMapping>& mappings) {
    while (true) {
        std::vector<PageIndex> pages;
        std::vector<std::uint32_t> levels;  // coarser levels take the room of finer ones
        pages.reserve(keys.size());
        levels.reserve(keys.size());
        for (const PendingKey& key : keys) {
            pages.push_back(key.page);
            levels.push_back(key.mip);
        }
        try {
            mappings = table_.commit(pages, {.pin = true,
                                             .wanted_in = oldest_ask(keys),
                                             .recent_frames = book_.recent_frames(),
                                             .precedence = levels});
            return CommitOutcome::committed;
        } catch (const Error& error) {
            const bool no_room =
                error.code() == Errc::budget_exhausted || error.code() == Errc::superseded;
            if (no_room && keys.size() > 1) {
                // Keep the higher-priority half and try again.
                const std::size_t keep = keys.size() / 2;
                const RequestBook::Lock lock = book_.lock();
                book_.requeue(lock, std::span(keys).subspan(keep));
                keys.resize(keep);
                continue;
            }
            if (error.code() == Errc::superseded) {
                const RequestBook::Lock lock = book_.lock();
                book_.supersede(lock, keys);
                return CommitOutcome::superseded;
            }
            if (no_room || error.code() == Errc::busy) {
                stall(keys);
                return CommitOutcome::stalled;
            }
            fail(keys);
            return CommitOutcome::failed;
        }
    }
}

// The rule of the batch's oldest request (the strictest); 0 when one was asked before any frame.
FrameId CommitStage::oldest_ask(const std::vector<PendingKey>& keys) {
    FrameId oldest = keys.empty() ? 0 : keys.front().asked_in;
    for (const PendingKey& key : keys) oldest = std::min(oldest, key.asked_in);
    return oldest;
}

void CommitStage::stall(const std::vector<PendingKey>& keys) {
    const RequestBook::Lock lock = book_.lock();
    book_.requeue(lock, keys);
    ++book_.stats(lock).budget_stalls;
}

// The error is recorded before the pages leave flight, as the other stages do: whoever sees the
// streamer idle sees the error.
void CommitStage::fail(const std::vector<PendingKey>& keys) {
    errors_.record(std::current_exception());
    const RequestBook::Lock lock = book_.lock();
    for (PendingKey key : keys) book_.leave_flight(lock, key.page, key.asked_in);
    book_.stats(lock).failed_pages += keys.size();
    book_.notify_if_idle(lock);
}

}  // namespace vtpage::vt::streamer_detail
