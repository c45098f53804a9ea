#include "vtpage/streaming/feedback/feedback_worker.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "streaming/feedback/stale_requests.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kept_results = 256;

double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

FeedbackWorker::FeedbackWorker(Streamer& streamer, FeedbackWorkerSettings settings)
    : streamer_(streamer),
      settings_(std::move(settings)),
      processor_(streamer.textures(), settings_.feedback),
      stale_(std::make_unique<StaleRequests>()),
      residency_(settings_.residency_window_frames),
      thread_([this] { run(); }) {}

FeedbackWorker::~FeedbackWorker() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    // The device has finished every frame completed: the streamer may evict what they used.
    if (last_completed_ < complete_through_) {
        try {
            streamer_.complete_frame(complete_through_);
        } catch (...) {  // nothing to report to: the frames stay open until the streamer goes
        }
    }
}

void FeedbackWorker::post(FrameId frame, std::span<const FeedbackEntry> entries) {
    hand_over(frame, entries, true);
}

void FeedbackWorker::post_feedback(FrameId frame, std::span<const FeedbackEntry> entries) {
    hand_over(frame, entries, false);
}

void FeedbackWorker::hand_over(FrameId frame, std::span<const FeedbackEntry> entries,
                               bool completes) {
    std::vector<FeedbackEntry> buffer;
    {
        std::lock_guard lock(mutex_);
        if (frame <= last_posted_ || (completes && frame <= complete_through_)) {
            throw Error(Errc::invalid_argument,
                        completes ? "FeedbackWorker::post" : "FeedbackWorker::post_feedback",
                        "frames are posted in increasing order",
                        detail::concat("frame=", frame, " last_posted=", last_posted_,
                                       " last_completed=", complete_through_));
        }
        if (!free_buffers_.empty()) {
            buffer = std::move(free_buffers_.back());
            free_buffers_.pop_back();
        }
    }
    // The copy (device-visible memory, often) happens outside the lock: the worker goes on.
    buffer.assign(entries.begin(), entries.end());
    {
        std::lock_guard lock(mutex_);
        if (pending_.waiting) {
            ++statistics_.coalesced;
            free_buffers_.push_back(std::move(pending_.entries));
        }
        pending_ = Handoff{std::move(buffer), frame, Clock::now(), true};
        last_posted_ = frame;
        if (completes) complete_through_ = frame;
        ++statistics_.posted;
    }
    wake_.notify_one();
}

void FeedbackWorker::complete(FrameId frame) {
    {
        std::lock_guard lock(mutex_);
        if (frame < complete_through_) {
            throw Error(Errc::invalid_argument, "FeedbackWorker::complete",
                        "frames complete in increasing order",
                        detail::concat("frame=", frame, " last_completed=", complete_through_));
        }
        if (frame == complete_through_) return;
        complete_through_ = frame;
    }
    wake_.notify_one();
}

bool FeedbackWorker::drain(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, timeout, [this] {
        return !pending_.waiting && !busy_ && last_completed_ == complete_through_;
    });
}

void FeedbackWorker::pause_requests(bool paused) {
    std::lock_guard lock(mutex_);
    paused_ = paused;
}

std::vector<FeedbackFrameResult> FeedbackWorker::take_results() {
    std::lock_guard lock(mutex_);
    return std::exchange(results_, {});
}

FeedbackFrameResult FeedbackWorker::last_result() const {
    std::lock_guard lock(mutex_);
    return last_result_;
}

FeedbackWorkerStatistics FeedbackWorker::statistics() const {
    std::lock_guard lock(mutex_);
    FeedbackWorkerStatistics statistics = statistics_;
    statistics.handoff = handoff_.summary();
    return statistics;
}

std::exception_ptr FeedbackWorker::take_error() {
    std::lock_guard lock(mutex_);
    return std::exchange(error_, nullptr);
}

void FeedbackWorker::run() {
    trace::name_thread("vtpage feedback");
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] {
            return stopping_ || pending_.waiting || last_completed_ < complete_through_;
        });
        if (stopping_) return;
        Handoff work = std::exchange(pending_, Handoff{});
        const FrameId complete_through = complete_through_;
        busy_ = true;
        lock.unlock();
        std::optional<FeedbackFrameResult> result;
        std::exception_ptr failure;
        if (work.waiting) {
            VTPAGE_TRACE_SCOPE("streamer", "feedback", .frame = work.frame);
            result = handle(work, complete_through);
        } else {  // frames completed, with no feedback to process first
            complete_in_streamer(complete_through, failure);
        }
        lock.lock();
        if (failure && !error_) error_ = failure;
        if (result) {
            handoff_.record(Clock::now() - work.posted);
            free_buffers_.push_back(std::move(work.entries));
            keep_result_nolock(*result);
        }
        last_completed_ = std::max(last_completed_, complete_through);
        busy_ = false;
        idle_.notify_all();
    }
}

// Requests, then completes the frames completed so far: the pages the feedback touched are kept
// for the frame being recorded now before the frames that used them may let them go.
FeedbackFrameResult FeedbackWorker::handle(const Handoff& work, FrameId complete_through) {
    FeedbackFrameResult result;
    result.frame = work.frame;
    bool paused = false;
    {
        std::lock_guard lock(mutex_);
        paused = paused_;
    }
    std::exception_ptr failure;
    auto start = Clock::now();
    FeedbackResult& processed = processed_;
    processor_.process(work.entries, scratch_, processed);
    result.samples = processed.samples;
    result.requests = processed.requests.size();
    result.process_ms = milliseconds_since(start);
    start = Clock::now();
    if (!paused) {
        try {
            result.withdrawn = withdraw_stale(processed);
            if (settings_.on_requests) settings_.on_requests(work.frame, processed.requests);
            const StreamRequestResult requested = streamer_.request(processed.requests);
            result.ready = requested.ready;
            result.queued = requested.queued;
            result.budget = streamer_.budget_demand();
        } catch (...) {
            failure = std::current_exception();
        }
    }
    result.request_ms = milliseconds_since(start);
    // After the requests: a window's measure took 0.4 ms on the 1,050-texture set, and the
    // requests do not wait for it.
    if (settings_.residency_window_frames > 0) {
        residency_.add_frame(work.frame, scratch_.tiles);
        result.residency = residency_.measure_when_due(streamer_);
    }
    start = Clock::now();
    complete_in_streamer(complete_through, failure);
    result.complete_ms = milliseconds_since(start);
    result.handoff_ms = milliseconds_since(work.posted);
    if (settings_.after_frame) {
        try {
            settings_.after_frame(result);
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = failure;
    }
    return result;
}

// Worker thread only (last_completed_ is written by it alone, read here without the lock).
void FeedbackWorker::complete_in_streamer(FrameId frame, std::exception_ptr& failure) {
    if (frame <= last_completed_) return;
    try {
        streamer_.complete_frame(frame);
    } catch (...) {
        if (!failure) failure = std::current_exception();
    }
}

std::size_t FeedbackWorker::withdraw_stale(const FeedbackResult& processed) {
    const std::span<const PageIndex> withdrawn =
        stale_->withdraw(processed, streamer_, settings_.withdraw);
    if (!withdrawn.empty() && settings_.on_withdrawn) settings_.on_withdrawn(withdrawn);
    return withdrawn.size();
}

void FeedbackWorker::keep_result_nolock(const FeedbackFrameResult& result) {
    ++statistics_.processed;
    statistics_.withdrawn += result.withdrawn;
    last_result_ = result;
    if (results_.size() >= kept_results) results_.erase(results_.begin());
    results_.push_back(result);
}

}  // namespace vtpage::vt
