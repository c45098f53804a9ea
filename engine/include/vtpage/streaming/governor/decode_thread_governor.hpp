// How many decode threads take pages (Streamer::set_active_decode_threads), decided from what
// the app and the streamer measure, not guessed: more decode threads decode faster but slow the
// app's frames (they share the cores, the memory bandwidth and the copies with the render
// thread), and past some count they decode no faster at all. It only decides (no threads, no
// clock): the caller measures and applies, so that the rules run and are tested anywhere.
//
// Told after each feedback the time since the last update, the frame time, the pages read and
// waiting for a decode thread, the pages decoded and the decode threads' busy time, it judges
// the frames of a window by their tail (frame_percentile of the updates' slowest frames: the
// decode threads slow the worst frames long before the mean), and:
//   adds threads (a trial) after a window in which pages kept waiting for decode, the active
//     threads were busy and the frames were within the target; after the next window it keeps
//     them only if the pages decoded per second rose by more than min_gain and the frames
//     stayed within the target (without one, given or measured: their tail grew by no more than
//     max_frame_rise), else takes them back. A trial adds one thread at first and twice as many as
//     the last after each trial it kept, one again after one it took back, and a kept trial's
//     window starts the next trial at once where it still wants threads: a backlog that lasts
//     reaches the pool in a few windows (on an H200, 8 to 15 threads took 7 windows of 0.5 s one by
//     one, where a burst of streaming lasts a second or two);
//   surges, where the app gives a frame target: a backlog in every update that keeps
//   the active
//     threads busy is a burst (a scene loaded, a cut), over before a few windows of steps have
//     passed (on an H200 with 32 cores 2,048 pages took 0.45 s, in which steps went from 16
//     threads to 17): after surge_updates updates in a row and surge_seconds of it, the rest
//     of the pool goes on trial at once, measured against those updates and judged after its
//     window as any trial, and frame by frame too: over_target_updates updates in a row with
//     frames over the target take it back at once. A surge taken back is not tried again: the
//     steps are what is left;
//   removes a thread when over_target_updates updates in a row had a frame over the target
//     while pages were decoded, and after a window whose frames' tail was over the target
//     while pages were decoded, a thread a window, down to half the pool (decode threads that
//     slow a frame now and then, not three in a row: on an H200 with 16 cores, 15 decode
//     threads doubled the viewer's frame p99 over the instanced set, at any priority, where
//     its median did not move); a removal for a window's tail is itself measured: where the
//     next window's tail is neither within the target nor removal_min_tail_drop shorter, the
//     thread did not cause it (the app's own tail, the scheduler's jitter) and is given back,
//     and removals for a tail wait cooldown_windows windows, twice as many after each removal
//     in a row given back (up to 32 windows), so that a tail of the app's own does not cost
//     the app half its decode threads;
//   without a target, measures one: the app's own pace, tail_ratio times the lowest median
//     frame of its last pace_windows windows, and at least tail_slack_ms over it (from the
//     first window on), so that decode threads follow the frame time where the app names none.
//     Decode threads that slow the median itself (not seen on the H200s: the viewer's median
//     frame stayed within 2% from 8 threads to 15) raise it, a kept trial at a time, once their
//     windows are all that pace_windows remembers;
//   waits cooldown_windows windows after a removal or a trial that did not help before trying
//     again, twice as long after each trial in a row that did not help (up to 32 windows), so
//     that it does not add and remove a thread every window;
//   stays within 1 and pool_threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vtpage::vt {

struct DecodeThreadGovernorSettings {
    std::size_t pool_threads = 1;     // the decode threads started (the most that can be active)
    std::size_t initial_threads = 1;  // active at first
    // 0: no target given; the governor then holds the one it measures (tail_ratio), and
    // before it has measured one a trial's frames are compared with the window before it.
    double frame_ms_target = 0;
    // The measured target: this many times the app's pace, the lowest median frame of the last
    // pace_windows windows (>= 1; 0: none measured), and at least tail_slack_ms over it (a
    // loop of half a millisecond has that much of the scheduler's jitter however few threads
    // decode).
    double tail_ratio = 1.5;
    double tail_slack_ms = 0.5;
    std::uint32_t pace_windows = 32;
    // A window: at least this long and this many updates (throughput over a few feedbacks is
    // noise: a read burst, a page that decodes slowly).
    double window_seconds = 0.25;
    std::uint32_t window_updates = 8;
    double min_gain = 0.05;          // a trial's thread is kept only for more than 5% more pages/s
    double max_frame_rise = 0.10;    // without a target: the frames' tail may grow by 10% at most
    double frame_percentile = 0.99;  // of the updates' slowest frames: a window's frame time
    // Pages waited for decode in at least this share of a window's updates: a backlog.
    double backlog_share = 0.5;
    // The active threads decoded at least this share of the window's time: they were busy.
    double busy_share = 0.75;
    std::uint32_t over_target_updates = 3;
    // A thread removed for a window's tail is given back unless the next window's tail is
    // within the target or at least this share shorter (a thread past 8 of 15 added 8 to 12 %
    // to the viewer's frame p99 over the instanced set on a 16-core H200).
    double removal_min_tail_drop = 0.05;
    std::uint32_t cooldown_windows = 2;
    // A surge (with a frame target only): the whole pool on trial once surge_updates updates
    // in a row, at least surge_seconds long, had a backlog, busy threads and frames within it.
    bool surge = true;
    double surge_seconds = 0.05;
    std::uint32_t surge_updates = 4;
};

// One update's measurements, since the previous update.
struct DecodeThreadInput {
    double seconds = 0;    // wall time since the previous update (not finite, <= 0: ignored)
    double frame_ms = -1;  // the slowest frame since then; negative: none measured
    std::size_t waiting_pages = 0;    // read and waiting for a decode thread, now
    std::uint64_t decoded_pages = 0;  // decoded (loaded or failed) since the previous update
    double busy_seconds = 0;          // the decode threads' time decoding, summed, since then
};

enum class DecodeThreadChange : std::uint8_t { none, trial, kept, taken_back, removed, given_back };

struct DecodeThreadDecision {
    std::size_t active_threads = 1;
    DecodeThreadChange change = DecodeThreadChange::none;  // what this update did
};

struct DecodeThreadGovernorStatistics {
    std::uint64_t updates = 0;
    std::uint64_t windows = 0;
    std::uint64_t trials = 0;
    std::uint64_t kept = 0;            // trials whose thread made decoding faster
    std::uint64_t taken_back = 0;      // trials that did not
    std::uint64_t removed = 0;         // threads removed for frames over the target
    std::uint64_t given_back = 0;      // of them, given back: the next window's tail was no shorter
    std::uint64_t surges = 0;          // trials of the whole pool (counted among the trials)
    double measured_target_ms = 0;     // without frame_ms_target, the one it holds (0: none yet)
    double last_pages_per_second = 0;  // of the last window
};

class DecodeThreadGovernor {
public:
    // invalid_argument for no pool, initial_threads outside 1..pool_threads, a target that is
    // negative, not finite or above a minute, a window of no updates or a negative or
    // non-finite length, shares outside [0, 1] (removal_min_tail_drop below 1), or a surge of
    // no updates or a negative or non-finite length.
    explicit DecodeThreadGovernor(DecodeThreadGovernorSettings settings);

    DecodeThreadDecision update(const DecodeThreadInput& input);
    std::size_t active_threads() const noexcept { return active_; }
    const DecodeThreadGovernorSettings& settings() const noexcept { return settings_; }
    const DecodeThreadGovernorStatistics& statistics() const noexcept { return statistics_; }

private:
    // What a window measures, update by update.
    struct Window {
        double seconds = 0;
        std::uint32_t updates = 0;
        std::uint32_t backlog_updates = 0;
        std::uint64_t decoded_pages = 0;
        double busy_seconds = 0;
        std::vector<double> frames_ms;  // each update's slowest frame (its capacity is reused)
        void add(const DecodeThreadInput& input);
        void clear() noexcept;
    };
    // What an ended window says.
    struct Outcome {
        double pages_per_second = 0;
        double frame_ms = -1;   // the frames' percentile; negative: no frame measured
        double median_ms = -1;  // their median
        bool backlog = false;   // pages waited for decode in backlog_share of the updates
        bool busy = false;      // the active threads decoded busy_share of the time
    };

    void measure(const DecodeThreadInput& input);
    Outcome outcome();
    Outcome summarize(Window& w);
    double target_ms() const noexcept;
    void measure_target(double median_ms);
    bool frames_over_target(const DecodeThreadInput& input);
    bool frames_within_target(const Outcome& done) const;
    DecodeThreadChange remove_thread();
    DecodeThreadChange remove_for_tail(double tail_ms);
    bool removal_helped(const Outcome& after);
    DecodeThreadChange give_back_removal();
    DecodeThreadChange end_window();
    bool wants_surge() const;
    bool surge_slows_frames(const DecodeThreadInput& input);
    DecodeThreadChange start_surge();
    DecodeThreadChange start_trial(const Outcome& before, std::size_t threads);
    DecodeThreadChange end_trial(const Outcome& trial);
    DecodeThreadChange take_back_trial();
    bool wants_thread(const Outcome& done) const;
    void start_cooldown(std::uint32_t windows);

    DecodeThreadGovernorSettings settings_;
    std::size_t active_ = 1;
    Window window_;
    Window backlog_run_;           // the updates since the last one without a backlog
    bool trial_ = false;           // the window measures threads added on trial
    Outcome before_trial_;         // the window that started it
    std::size_t step_ = 1;         // threads the next trial adds
    std::size_t trial_added_ = 0;  // threads the trial under way added
    std::uint32_t over_in_a_row_ = 0;
    std::uint32_t cooldown_ = 0;             // windows left before the next trial
    bool removal_under_check_ = false;       // a thread removed for a tail; the next window judges
    double tail_before_removal_ = 0;         // the tail that removed it
    std::uint32_t tail_cooldown_ = 0;        // windows left before a tail removes a thread again
    std::uint32_t given_back_in_a_row_ = 0;  // removals given back in a row
    std::uint32_t failed_in_a_row_ = 0;      // trials taken back in a row
    bool surging_ = false;                   // the trial under way is a surge
    bool surge_spent_ = false;               // a surge was taken back: none again
    std::uint32_t surge_over_in_a_row_ = 0;  // the surge's updates with slower frames, in a row
    std::vector<double> paces_;              // the last pace_windows windows' medians (a ring)
    std::size_t next_pace_ = 0;              // where the ring writes next
    DecodeThreadGovernorStatistics statistics_;
};

}  // namespace vtpage::vt
