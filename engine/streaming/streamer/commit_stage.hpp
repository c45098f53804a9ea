// A batch's commit: its keys' pages committed pinned in the page table, within the budget.
// When the budget has no room for all, the higher-priority half is kept and the rest go back to
// pending; when it has room for none (or the table is busy) the batch stalls, all its keys back
// to pending. Pages are committed for the frame their oldest request was asked in
// (CommitOptions::wanted_in): a page that fits only by evicting pages wanted since is superseded
// (RequestBook::supersede), so that a view needing more than the budget keeps what it samples;
// "since" reaches back StreamerSettings::recent_frames frames, and a page's level is its
// precedence (CommitOptions): a coarser level may take the room of a finer one the view wants.
// Other errors fail the batch's pages.
//
// No lock of its own: it takes the request book's to put keys back, never while committing.
#pragma once

#include <vector>

#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/error_log.hpp"
#include "streaming/streamer/request_book.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::vt::streamer_detail {

// superseded: the pages fit only by evicting pages wanted since they were asked for (dropped).
enum class CommitOutcome { committed, stalled, failed, superseded };

class CommitStage {
public:
    CommitStage(PageTable& table, RequestBook& book, ErrorLog& errors)
        : table_(table), book_(book), errors_(errors) {}

    // Commits the pages of `keys` (those kept) into `mappings`.
    CommitOutcome commit(std::vector<PendingKey>& keys, std::vector<PageMapping>& mappings);

private:
    static FrameId oldest_ask(const std::vector<PendingKey>& keys);
    // Keys back to pending, the batch counted as a stall.
    void stall(const std::vector<PendingKey>& keys);
    // Keys out of flight, their pages counted failed, the error recorded.
    void fail(const std::vector<PendingKey>& keys);

    PageTable& table_;
    RequestBook& book_;
    ErrorLog& errors_;
};

}  // namespace vtpage::vt::streamer_detail
