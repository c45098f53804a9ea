// A worker's fills: host fills (a page, or a packed level's rows, through host memory) and the
// device fills of a batch, grouped by source on the worker's CUDA stream. Fills enqueued with
// on_fills_enqueued finish later: their batch's pages stay pinned until its ticket finished.
//
// One per worker thread, used by that thread alone: no lock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "streaming/streamer/batch_item.hpp"
#include "streaming/streamer/error_log.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/streaming/sources/device_fill_context.hpp"

namespace vtpage::vt::streamer_detail {

class FillStage {
public:
    struct Parts {
        Backend& backend;
        bool gpu = false;
        int device = 0;
        const StreamerSettings& settings;
        ErrorLog& errors;
        std::function<void(std::span<const PageIndex>)> unpin;
    };
    // Makes the worker's device context on a GPU (without one, fills go through host memory).
    explicit FillStage(Parts parts);
    ~FillStage();

    struct Filled {
        std::uint64_t fence = 0;         // of the device fills; 0 when waited for
        std::uint64_t async_ticket = 0;  // the batch to wait for before unpinning its pages
    };
    // Fills the items, marking each filled or failed.
    Filled fill(std::vector<BatchItem>& items);
    // Keeps `pinned` pinned until the batch of `ticket` finished.
    void unpin_after(std::uint64_t ticket, std::vector<PageIndex> pinned);
    // Unpins the pages of the batches that finished (all of them, waited for, when `wait`).
    void release_finished(bool wait);
    bool holding() const noexcept { return !async_.empty(); }
    // At the worker's end: every batch waited for and released, the stream synchronized.
    void finish();

private:
    using DeviceGroups = std::map<const TileSource*, std::vector<BatchItem*>>;
    // Packed levels and tiles by the source page they are copied from.
    using LevelGroups =
        std::map<std::pair<const TileSource*, std::uint64_t>, std::vector<BatchItem*>>;
    struct AsyncBatch {
        std::uint64_t ticket = 0;
        std::vector<PageIndex> pinned;
    };

    void fill_here(BatchItem& item);
    void fill_levels(const std::vector<BatchItem*>& group);
    void fill_levels_on_device(LevelGroups& groups);
    std::uint64_t fill_on_device(DeviceGroups& groups, std::uint64_t& async_ticket);
    bool enqueue(DeviceGroups& groups);
    bool fill_one_by_one(const TileSource& source, const std::vector<DevicePageFill>& fills,
                         const std::vector<BatchItem*>& group,
                         const std::exception_ptr& group_error);
    void end_batch(DeviceGroups& groups, bool waited, std::uint64_t& async_ticket);
    void fail_all(DeviceGroups& groups, const std::exception_ptr& error);

    Parts parts_;
    std::unique_ptr<DeviceFillContext> context_;
    std::deque<AsyncBatch> async_;
};

}  // namespace vtpage::vt::streamer_detail
