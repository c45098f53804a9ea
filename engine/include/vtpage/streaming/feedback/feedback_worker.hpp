// Feedback handled off the render thread: the render loop hands each frame's feedback over
// (one copy into a buffer the worker owns, never a wait), and a thread of its own turns it into
// requests, withdraws what the view no longer asks for, and completes the frame in the streamer.
//
//   FeedbackWorker worker(streamer);
//   each frame, once its GPU work is done:
//     worker.post(frame_id, feedback_entries);   // copies, returns at once
//   or, where the feedback is read before the rest of its frame is done (a frame submitted as
//   its feedback pass, then the rest, signalled apart):
//     worker.post_feedback(frame_id, feedback_entries);   // as soon as the feedback is read
//     worker.complete(frame_id);                          // once the whole frame is done
//   before reading results that must include everything posted (tests, settling):
//     worker.drain(1s);
//
// Bounded hand-off: one feedback waits at most. A frame posted while the previous one's feedback
// still waits replaces it (only the newest view matters; counted as coalesced). Every frame
// completed (post, complete) is completed in the streamer, in order, after the requests of the
// feedback processed with it or before it, so that the pages a view asks for are kept for the
// frame being recorded before the frames that used them may let them go. The render thread thus
// never waits for processing however slow it is, and the memory used is three feedback buffers,
// reused.
//
// Errors of the streamer (a request naming a page of no texture, ...) do not stop the worker:
// the oldest is kept for take_error(). Destruction processes nothing more, completes the frames
// completed so far and joins the thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_set>
#include <vector>

#include "vtpage/core/latency_histogram.hpp"
#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/feedback/residency_efficiency.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt {

class StaleRequests;

// What the worker made of one feedback.
struct FeedbackFrameResult {
    FrameId frame = 0;          // the frame whose feedback it is
    std::size_t samples = 0;    // non-empty entries
    std::size_t requests = 0;   // pages asked for (parents included)
    std::size_t ready = 0;      // ... of which were resident
    std::size_t queued = 0;     // ... newly queued
    std::size_t withdrawn = 0;  // pending requests cancelled
    // Worker time: reading the feedback, withdrawing and requesting, completing the frame.
    double process_ms = 0, request_ms = 0, complete_ms = 0;
    // From post() to the end of processing: how far the worker trails the render loop.
    double handoff_ms = 0;
    // The newest measure of how much of what is resident the view samples, taken every
    // residency_window_frames feedbacks (frame 0 before the first).
    ResidencySample residency;
    // The view against the budget after its requests (Streamer::budget_demand).
    BudgetDemand budget;
};

struct FeedbackWorkerSettings {
    FeedbackSettings feedback;
    // The window of ResidencyEfficiency, and how often it is measured (0: never).
    std::uint32_t residency_window_frames = 8;
    // Cancel pending requests that the newest feedback no longer makes, before they take a
    // worker's time: stream what is in view now rather than what was a second ago.
    bool withdraw = true;
    // Called on the worker's thread after each feedback it processed (the frame completed):
    // housekeeping that must not run on the render thread, such as giving pages back under
    // memory pressure. An exception it throws is kept like the streamer's.
    std::function<void(const FeedbackFrameResult&)> after_frame;
    // Called on the worker's thread with each feedback's requests just before they go to the
    // streamer (the frame is the feedback's), and with the pages withdrawn from the streamer:
    // for measurements such as RequestLatencyTracker. Not called while requests are paused.
    std::function<void(FrameId, std::span<const PageRequest>)> on_requests;
    std::function<void(std::span<const PageIndex>)> on_withdrawn;
};

struct FeedbackWorkerStatistics {
    std::uint64_t posted = 0;     // frames handed over
    std::uint64_t processed = 0;  // feedbacks turned into requests
    std::uint64_t coalesced = 0;  // feedbacks replaced by a newer one before processing
    std::uint64_t withdrawn = 0;  // pending requests cancelled, in all
    LatencySummary handoff;       // post() to processed
};

class FeedbackWorker {
public:
    // The streamer outlives the worker.
    explicit FeedbackWorker(Streamer& streamer, FeedbackWorkerSettings settings = {});
    ~FeedbackWorker();
    FeedbackWorker(const FeedbackWorker&) = delete;
    FeedbackWorker& operator=(const FeedbackWorker&) = delete;

    // Hands frame `frame`'s feedback over (copied) and completes the frame: the device has
    // finished it. Frames are posted in increasing order (invalid_argument otherwise). Never
    // waits for the worker.
    void post(FrameId frame, std::span<const FeedbackEntry> entries);
    // Hands over the feedback of a frame the device may still be drawing (copied); complete()
    // follows once it has finished. In increasing order, as post().
    void post_feedback(FrameId frame, std::span<const FeedbackEntry> entries);
    // The device has finished `frame`, whose feedback was posted (or that has none): the worker
    // completes it in the streamer after the requests of the feedback posted before. Frames
    // complete in increasing order (invalid_argument otherwise; again the same frame is
    // nothing).
    void complete(FrameId frame);
    // Waits until everything posted has been processed and the frames completed so far are
    // completed in the streamer; false when that takes longer than `timeout`.
    bool drain(std::chrono::milliseconds timeout);
    // While paused, feedback is still read and frames completed, but nothing is requested.
    void pause_requests(bool paused);

    // Results processed since the last call, oldest first (at most 256 are kept).
    std::vector<FeedbackFrameResult> take_results();
    // The newest result (frame 0 before the first).
    FeedbackFrameResult last_result() const;
    FeedbackWorkerStatistics statistics() const;
    std::exception_ptr take_error();

private:
    struct Handoff {
        std::vector<FeedbackEntry> entries;
        FrameId frame = 0;
        std::chrono::steady_clock::time_point posted;
        bool waiting = false;
    };
    void run();
    // Processes the feedback handed over, then completes frames up to `complete_through`.
    FeedbackFrameResult handle(const Handoff& work, FrameId complete_through);
    void complete_in_streamer(FrameId frame, std::exception_ptr& failure);
    // post (completes: the frame is complete too) and post_feedback.
    void hand_over(FrameId frame, std::span<const FeedbackEntry> entries, bool completes);
    std::size_t withdraw_stale(const FeedbackResult& processed);
    void keep_result_nolock(const FeedbackFrameResult& result);

    Streamer& streamer_;
    FeedbackWorkerSettings settings_;
    FeedbackProcessor processor_;
    // Worker thread only, kept from feedback to feedback so that nothing large is allocated
    // and freed each frame: the last feedback's pages, the processor's tables, its result.
    std::unique_ptr<StaleRequests> stale_;
    FeedbackScratch scratch_;
    FeedbackResult processed_;
    ResidencyEfficiency residency_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;  // work posted, or stopping
    std::condition_variable idle_;  // a hand-off finished
    Handoff pending_;               // guarded: the newest feedback not yet taken
    // Buffers of feedbacks no longer needed, for the next post(): three exist at most (one
    // being filled, one waiting, one being processed), and none is freed while the worker lives.
    std::vector<std::vector<FeedbackEntry>> free_buffers_;
    FrameId last_posted_ = 0;
    FrameId complete_through_ = 0;  // the newest frame the caller said is complete
    FrameId last_completed_ = 0;    // the newest completed in the streamer
    bool busy_ = false;
    bool paused_ = false;
    bool stopping_ = false;
    std::vector<FeedbackFrameResult> results_;
    FeedbackFrameResult last_result_;
    FeedbackWorkerStatistics statistics_;
    LatencyHistogram handoff_;
    std::exception_ptr error_;
    std::thread thread_;  // last: starts once everything above exists
};

}  // namespace vtpage::vt
