// How much of what is resident the view looks at. A page holds 32 or 64 tiles (a packed coarse
// level its own tiles), and a view that samples one tile of a page makes all of them resident:
// this measures the share of resident tiles that the feedback asked for in the last frames, and
// the bytes that residency by tile (each tile in pooled pages, as packed levels are placed)
// would have needed for the same views.
//
//   ResidencyEfficiency residency;                     // the last 8 frames
//   each frame, after FeedbackProcessor::process:
//     residency.add_frame(frame, scratch.tiles);       // the tiles this frame asked for
//   now and then (it reads every ready page):
//     ResidencySample sample = residency.measure(streamer);
//
// Tails are left out on both sides: they are resident whatever the view. Not thread-safe: one
// thread adds and measures (the feedback worker, or the caller that processes feedback).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "vtpage/core/page_table.hpp"

namespace vtpage::vt {

class Streamer;

struct ResidencySample {
    FrameId frame = 0;                      // the newest frame added when measured (0: never)
    std::uint64_t resident_tiles = 0;       // tiles of ready pages and packed levels (no tails)
    std::uint64_t sampled_tiles = 0;        // ... of which the feedback asked for in the window
    std::uint64_t asked_tiles = 0;          // distinct tiles asked for in the window (no tails)
    std::uint64_t resident_bytes = 0;       // ready pages whole, packed levels by their tiles
    std::uint64_t tile_granular_bytes = 0;  // asked_tiles at their formats' tile sizes
    // The resident pages (and packed levels) with a tile asked for in the window, their tiles
    // and bytes: what the view uses now, apart from what the budget keeps from earlier views.
    std::uint64_t in_use_tiles = 0;
    std::uint64_t in_use_bytes = 0;

    // sampled_tiles / resident_tiles (1 when nothing is resident): with a budget that keeps
    // earlier views' pages, mostly how much of the budget the view in front holds.
    double sampled_share() const noexcept {
        return resident_tiles ? double(sampled_tiles) / double(resident_tiles) : 1.0;
    }
    // sampled_tiles / in_use_tiles (1 when none): how much of the pages the view samples it
    // samples, what residency by page costs beside residency by tile.
    double in_use_share() const noexcept {
        return in_use_tiles ? double(sampled_tiles) / double(in_use_tiles) : 1.0;
    }
};

class ResidencyEfficiency {
public:
    explicit ResidencyEfficiency(std::uint32_t window_frames = 8);

    std::uint32_t window_frames() const noexcept { return window_; }
    // The tiles frame `frame`'s feedback asked for: keys as FeedbackScratch::tiles has them
    // (FeedbackEntry::texture_mip << 32 | tile_xy), with any value. Frames in increasing order;
    // the window counts the feedbacks added, so that feedback coalesced away (a newer view
    // replacing it, FeedbackWorker) does not shrink it.
    template <typename TileCounts>
    void add_frame(FrameId frame, const TileCounts& tiles) {
        newest_ = frame;
        ++added_;
        ++since_measured_;
        for (const auto& entry : tiles) asked_[entry.first] = added_;
    }
    // Against the streamer's ready pages, the tiles asked for in the newest window_frames
    // feedbacks added. Drops what is older.
    ResidencySample measure(const Streamer& streamer);
    // measure() once window_frames frames were added since it last ran; else its last sample.
    const ResidencySample& measure_when_due(const Streamer& streamer);

private:
    std::uint32_t window_;
    FrameId newest_ = 0;
    std::uint64_t added_ = 0;  // feedbacks added
    std::uint32_t since_measured_ = 0;
    ResidencySample last_;
    std::unordered_map<std::uint64_t, std::uint64_t> asked_;  // tile key -> the newest feedback
};

}  // namespace vtpage::vt
