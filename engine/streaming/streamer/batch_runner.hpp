// One batch on a worker: its packed coarse levels placed, its other pages committed (the commit
// stage), the items made, stored pages handed to the loader, the rest filled (the worker's fill
// stage) and finished; timed for the statistics and traced per page.
//
// No lock of its own: it takes the level placement's while placing, and the request book's to
// put keys back and count.
#pragma once

#include <chrono>
#include <vector>

#include "streaming/streamer/batch_finisher.hpp"
#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/commit_stage.hpp"
#include "streaming/streamer/fill_stage.hpp"
#include "streaming/streamer/level_placement.hpp"
#include "streaming/streamer/request_book.hpp"
#include "streaming/streamer/stored_page_route.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt::streamer_detail {

class BatchRunner {
public:
    struct Parts {
        PageTable& table;
        const TextureSet& textures;
        RequestBook& book;
        LevelPlacement& placement;
        StoredPageRoute& stored;
        CommitStage& commits;
        BatchFinisher& finisher;
    };
    explicit BatchRunner(Parts parts) : parts_(parts) {}

    // Runs the batch of `keys` (taken into flight). False when nothing fitted the budget.
    bool run(std::vector<PendingKey> keys, FillStage& fills);

private:
    using Clock = std::chrono::steady_clock;
    struct Timing {
        TraceRecorder* trace = nullptr;  // one for the whole batch (none if none as it begins)
        Clock::time_point commit_start, fill_start;
        std::int64_t trace_commit_start = 0, trace_fill_start = 0;
    };

    // Takes the keys of packable coarse levels out of `keys` and places them; returns their
    // items, puts back in pending those that wait for a place and drops the superseded ones.
    std::vector<BatchItem> place_levels(std::vector<PendingKey>& keys);
    // A key that got no place: not a level with a host (streamed as a page), a level that waits
    // (frames in flight), or a level superseded by those wanted since it was asked for.
    enum class LevelOutcome { not_a_level, waits, superseded };
    std::optional<BatchItem> place_level(const LevelPlacement::PlacementLock& placing,
                                         const PendingKey& key, LevelOutcome& outcome);
    void add_committed(std::vector<BatchItem>& items, const std::vector<PendingKey>& keys,
                       const std::vector<PageMapping>& mappings);
    void fill_and_finish(std::vector<BatchItem>& items, FillStage& fills, Timing& timing);
    void trace_commits(const Timing& timing, const std::vector<BatchItem>& items,
                       const std::vector<PageMapping>& mappings);
    void count_batch(const Timing& timing, Clock::time_point done);

    Parts parts_;
};

}  // namespace vtpage::vt::streamer_detail
