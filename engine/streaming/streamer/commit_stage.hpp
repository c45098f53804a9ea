// A batch's commit: its keys' pages committed pinned in the page table, within the budget.
// When the budget has no room for all, the higher-priority half is kept and the rest go back to
// pending; when it has room for none (or the table is busy) the batch stalls, all its keys back
// to pending. Other errors fail the batch's pages.
//
// No lock of its own: it takes the request book's to put keys back, never while committing.
#pragma once

#include <vector>

#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/error_log.hpp"
#include "streaming/streamer/request_book.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::vt::streamer_detail {

enum class CommitOutcome { committed, stalled, failed };

class CommitStage {
public:
    CommitStage(PageTable& table, RequestBook& book, ErrorLog& errors)
        : table_(table), book_(book), errors_(errors) {}

    // Commits the pages of `keys` (those kept) into `mappings`.
    CommitOutcome commit(std::vector<PendingKey>& keys, std::vector<PageMapping>& mappings);

private:
    // Keys back to pending, the batch counted as a stall.
    void stall(const std::vector<PendingKey>& keys);
    // Keys out of flight, their pages counted failed, the error recorded.
    void fail(const std::vector<PendingKey>& keys);

    PageTable& table_;
    RequestBook& book_;
    ErrorLog& errors_;
};

}  // namespace vtpage::vt::streamer_detail
