// The decode threads of VirtualTextureStreaming's streamer, governed: when the streamer chose
// them (StreamerFileReads::decode_threads 0), the thread that processes feedback runs govern()
// after each feedback with the frame time measured since the last one. It takes what the decode
// threads did meanwhile (Streamer::decode_threads: pages decoded, busy time, pages waiting),
// lets a vt::DecodeThreadGovernor decide and sets the streamer's active count. An explicit count
// is left as it is. Its statistics are published under mutex_ for any thread.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "vtpage/streaming/governor/decode_thread_governor.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage {

class DecodeThreadGovernance {
public:
    using Clock = std::chrono::steady_clock;

    // Its pool_threads and initial_threads are the streamer's (set at the first govern()); the
    // rest is checked here (DecodeThreadGovernor's invalid_argument).
    explicit DecodeThreadGovernance(vt::DecodeThreadGovernorSettings settings);

    // The thread that processes feedback, after each one; frame_ms is the slowest frame since
    // the last call (negative: none measured).
    void govern(vt::Streamer& streamer, double frame_ms);

    // Whether the decode threads are governed (false until the first govern()), and what was
    // decided so far (any thread).
    bool governed() const;
    vt::DecodeThreadGovernorStatistics statistics() const;

private:
    void start(const vt::DecodeThreadLoad& load, Clock::time_point now);

    vt::DecodeThreadGovernorSettings settings_;
    std::unique_ptr<vt::DecodeThreadGovernor> governor_;  // the feedback thread's only
    vt::DecodeThreadLoad last_;                           // the feedback thread's only
    Clock::time_point last_time_;                         // the feedback thread's only
    mutable std::mutex mutex_;                            // guards the two below
    bool governed_ = false;
    vt::DecodeThreadGovernorStatistics statistics_;
};

}  // namespace vtpage
