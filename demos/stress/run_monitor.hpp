// The thread beside the workers: redraws the progress bar, checks the table's invariants
// while the workers run, and (when asked) begins a frame every few milliseconds and completes
// the one two frames back, so that pages used by frames in flight are fenced from eviction.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "op_quota.hpp"
#include "run_stats.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/core/page_table.hpp"

namespace vtpage::stress {

struct MonitorSettings {
    double check_ms = 100;  // 0: no checks while running
    double frame_ms = 0;    // 0: no frames
    FrameId frames_in_flight = 2;
};

class RunMonitor {
public:
    RunMonitor(PageTable& table, RunStats& stats, OpQuota& quota, app::ProgressBar& progress,
               MonitorSettings settings);
    ~RunMonitor();  // stops
    void stop();

private:
    void run();
    std::string status() const;

    PageTable& table_;
    RunStats& stats_;
    OpQuota& quota_;
    app::ProgressBar& progress_;
    MonitorSettings settings_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace vtpage::stress
