#include "vtpage/streaming/governor/decode_thread_governor.hpp"

#include <algorithm>
#include <cmath>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

namespace {

// Trials that did not help wait at most this many windows before the next one.
constexpr std::uint32_t longest_cooldown_windows = 32;

void check(bool valid, const char* what) {
    if (!valid) throw Error(Errc::invalid_argument, "DecodeThreadGovernor", what);
}

bool share(double value) { return std::isfinite(value) && value >= 0 && value <= 1; }

void check_settings(const DecodeThreadGovernorSettings& s) {
    check(s.pool_threads > 0, "pool_threads must not be 0");
    check(s.initial_threads > 0 && s.initial_threads <= s.pool_threads,
          "initial_threads must be 1 to pool_threads");
    check(std::isfinite(s.frame_ms_target) && s.frame_ms_target >= 0 && s.frame_ms_target <= 60000,
          "frame_ms_target must be a number of milliseconds from 0 to 60000");
    check(std::isfinite(s.window_seconds) && s.window_seconds >= 0 && s.window_updates > 0,
          "a window needs a length >= 0 and at least one update");
    check(std::isfinite(s.min_gain) && s.min_gain >= 0 && std::isfinite(s.max_frame_rise) &&
              s.max_frame_rise >= 0,
          "min_gain and max_frame_rise must be finite and >= 0");
    check(share(s.backlog_share) && share(s.busy_share) && share(s.frame_percentile),
          "backlog_share, busy_share and frame_percentile must be from 0 to 1");
    check(share(s.removal_min_tail_drop) && s.removal_min_tail_drop < 1,
          "removal_min_tail_drop must be from 0 to below 1");
    check(s.over_target_updates > 0, "over_target_updates must not be 0");
    check(std::isfinite(s.tail_ratio) &&
              (s.tail_ratio == 0 || (s.tail_ratio >= 1 && s.tail_ratio <= 100)),
          "tail_ratio must be 0 (none) or from 1 to 100");
    check(std::isfinite(s.tail_slack_ms) && s.tail_slack_ms >= 0 && s.tail_slack_ms <= 1000,
          "tail_slack_ms must be a number of milliseconds from 0 to 1000");
    check(s.pace_windows > 0 && s.pace_windows <= 4096, "pace_windows must be 1 to 4096");
    check(std::isfinite(s.surge_seconds) && s.surge_seconds >= 0 && s.surge_updates > 0,
          "a surge needs a length >= 0 and at least one update");
}

bool measured(double frame_ms) { return std::isfinite(frame_ms) && frame_ms >= 0; }

// `windows` doubled `doublings` times (at most 5), and no longer than longest_cooldown_windows
// (or `windows` itself where that is longer).
std::uint32_t doubled_cooldown(std::uint32_t windows, std::uint32_t doublings) {
    const std::uint64_t longer = std::uint64_t(windows) << std::min<std::uint32_t>(doublings, 5);
    return std::uint32_t(
        std::min<std::uint64_t>(longer, std::max(longest_cooldown_windows, windows)));
}

}  // namespace

void DecodeThreadGovernor::Window::clear() noexcept {
    seconds = 0;
    updates = backlog_updates = 0;
    decoded_pages = 0;
    busy_seconds = 0;
    frames_ms.clear();
}

DecodeThreadGovernor::DecodeThreadGovernor(DecodeThreadGovernorSettings settings)
    : settings_(settings) {
    check_settings(settings_);
    active_ = settings_.initial_threads;
}

DecodeThreadDecision DecodeThreadGovernor::update(const DecodeThreadInput& input) {
    ++statistics_.updates;
    if (!std::isfinite(input.seconds) || input.seconds <= 0) return {active_};
    measure(input);
    DecodeThreadChange change = DecodeThreadChange::none;
    if (surge_slows_frames(input)) {
        window_.clear();
        change = take_back_trial();
    } else if (frames_over_target(input)) {
        change = remove_thread();
    } else if (window_.seconds >= settings_.window_seconds &&
               window_.updates >= settings_.window_updates) {
        change = end_window();
    } else if (wants_surge()) {
        change = start_surge();
    }
    return {active_, change};
}

void DecodeThreadGovernor::Window::add(const DecodeThreadInput& input) {
    seconds += input.seconds;
    ++updates;
    if (input.waiting_pages > 0) ++backlog_updates;
    decoded_pages += input.decoded_pages;
    if (std::isfinite(input.busy_seconds) && input.busy_seconds > 0) {
        busy_seconds += input.busy_seconds;
    }
    if (measured(input.frame_ms)) frames_ms.push_back(input.frame_ms);
}

void DecodeThreadGovernor::measure(const DecodeThreadInput& input) {
    window_.add(input);
    if (input.waiting_pages > 0) {
        backlog_run_.add(input);
    } else {
        backlog_run_.clear();
    }
}

// The window's figures, and a fresh window.
DecodeThreadGovernor::Outcome DecodeThreadGovernor::outcome() { return summarize(window_); }

// What `w` measured; it is cleared.
DecodeThreadGovernor::Outcome DecodeThreadGovernor::summarize(Window& w) {
    Outcome done;
    done.pages_per_second = w.seconds > 0 ? double(w.decoded_pages) / w.seconds : 0;
    done.backlog = w.backlog_updates >= settings_.backlog_share * w.updates;
    done.busy = w.busy_seconds >= settings_.busy_share * w.seconds * double(active_);
    if (!w.frames_ms.empty()) {
        std::vector<double>& frames = w.frames_ms;
        const auto middle = frames.begin() + std::ptrdiff_t(frames.size() / 2);
        std::nth_element(frames.begin(), middle, frames.end());
        done.median_ms = *middle;
        const auto rank =
            std::size_t(std::ceil(settings_.frame_percentile * double(frames.size() - 1)));
        std::nth_element(frames.begin(), frames.begin() + std::ptrdiff_t(rank), frames.end());
        done.frame_ms = frames[rank];
    }
    w.clear();
    return done;
}

// The target given, else the one measured (0: none).
double DecodeThreadGovernor::target_ms() const noexcept {
    return settings_.frame_ms_target > 0 ? settings_.frame_ms_target
                                         : statistics_.measured_target_ms;
}

// The app's pace: the lowest of the last pace_windows windows' median frames (windows without
// threads on trial). The decode threads slow the worst frames long before the median, and the
// lowest median is the least of their doing; tail_ratio times it, and tail_slack_ms over it.
void DecodeThreadGovernor::measure_target(double median_ms) {
    if (settings_.frame_ms_target > 0 || settings_.tail_ratio <= 0 || median_ms < 0) return;
    if (paces_.size() < settings_.pace_windows) {
        paces_.push_back(median_ms);
    } else {
        paces_[next_pace_] = median_ms;
    }
    next_pace_ = (next_pace_ + 1) % settings_.pace_windows;
    const double pace = *std::min_element(paces_.begin(), paces_.end());
    statistics_.measured_target_ms =
        std::max(settings_.tail_ratio * pace, pace + settings_.tail_slack_ms);
}

bool DecodeThreadGovernor::frames_within_target(const Outcome& done) const {
    return target_ms() <= 0 || done.frame_ms <= target_ms();
}

// Frames over the target while decoding, over_target_updates in a row. A frame over the target
// with nothing decoded is not the decode threads' doing.
bool DecodeThreadGovernor::frames_over_target(const DecodeThreadInput& input) {
    if (target_ms() <= 0 || !measured(input.frame_ms)) return false;
    const bool decoding = input.decoded_pages > 0 || input.busy_seconds > 0;
    if (input.frame_ms > target_ms() && decoding) {
        ++over_in_a_row_;
    } else {
        over_in_a_row_ = 0;
    }
    return over_in_a_row_ >= settings_.over_target_updates;
}

// A surge is judged frame by frame as well: over_target_updates updates in a row with a frame
// over the target end it at once, so that a burst costs the app a few slow frames, not a
// window of them.
bool DecodeThreadGovernor::surge_slows_frames(const DecodeThreadInput& input) {
    if (!surging_ || !measured(input.frame_ms)) return false;
    const bool over = input.frame_ms > target_ms();
    surge_over_in_a_row_ = over ? surge_over_in_a_row_ + 1 : 0;
    return surge_over_in_a_row_ >= settings_.over_target_updates;
}

DecodeThreadChange DecodeThreadGovernor::remove_thread() {
    over_in_a_row_ = 0;
    removal_under_check_ = false;  // frames over the target in a row: kept without a check
    window_.clear();
    if (trial_) return take_back_trial();  // the trial slowed the frames: as one that did not help
    start_cooldown(settings_.cooldown_windows);
    if (active_ <= 1) return DecodeThreadChange::none;
    --active_;
    ++statistics_.removed;
    return DecodeThreadChange::removed;
}

// A thread fewer for a window whose frames' tail was over the target; the next window judges it.
DecodeThreadChange DecodeThreadGovernor::remove_for_tail(double tail_ms) {
    const DecodeThreadChange change = remove_thread();
    if (change == DecodeThreadChange::removed) {
        removal_under_check_ = true;
        tail_before_removal_ = tail_ms;
    }
    return change;
}

// The window after a removal for a tail: kept where its frames are within the target, their
// tail is removal_min_tail_drop shorter, or no frame was measured.
bool DecodeThreadGovernor::removal_helped(const Outcome& after) {
    removal_under_check_ = false;
    const bool helped =
        after.frame_ms < 0 || frames_within_target(after) ||
        after.frame_ms <= tail_before_removal_ * (1 - settings_.removal_min_tail_drop);
    if (helped) given_back_in_a_row_ = 0;
    return helped;
}

// The tail did not shorten: the thread was not its cause. Tails wait before they remove again,
// twice as long after each removal in a row given back.
DecodeThreadChange DecodeThreadGovernor::give_back_removal() {
    active_ = std::min(active_ + 1, settings_.pool_threads);
    ++statistics_.given_back;
    ++given_back_in_a_row_;
    tail_cooldown_ = doubled_cooldown(settings_.cooldown_windows, given_back_in_a_row_);
    return DecodeThreadChange::given_back;
}

DecodeThreadChange DecodeThreadGovernor::end_window() {
    ++statistics_.windows;
    const bool decoded = window_.decoded_pages > 0 || window_.busy_seconds > 0;
    const Outcome done = outcome();
    statistics_.last_pages_per_second = done.pages_per_second;
    if (trial_) return end_trial(done);
    measure_target(done.median_ms);
    if (removal_under_check_ && !removal_helped(done)) return give_back_removal();
    // Frames over the target now and then, not in a row, while decoding: a thread fewer each
    // window while that shortens the tail, down to half the pool.
    const std::size_t tail_floor = std::max<std::size_t>(1, settings_.pool_threads / 2);
    const bool tail_over = decoded && done.frame_ms >= 0 && !frames_within_target(done);
    if (tail_cooldown_ > 0) {
        --tail_cooldown_;
    } else if (tail_over && active_ > tail_floor) {
        return remove_for_tail(done.frame_ms);
    }
    if (cooldown_ > 0) {
        --cooldown_;
        return DecodeThreadChange::none;
    }
    if (!wants_thread(done)) return DecodeThreadChange::none;
    return start_trial(done, step_);
}

DecodeThreadChange DecodeThreadGovernor::start_trial(const Outcome& before, std::size_t threads) {
    before_trial_ = before;
    trial_ = true;
    trial_added_ = std::min(threads, settings_.pool_threads - active_);
    active_ += trial_added_;
    ++statistics_.trials;
    return DecodeThreadChange::trial;
}

// A backlog in every update for surge_updates updates and surge_seconds, the active threads
// busy and the frames within the target: a burst, which the steps would follow too late. Only
// with a target given: compared with the frames before, on an H200 every surge made them
// slower than the 10% a trial may (the app's thread waited for a core behind the whole pool),
// and against a measured target one on 16 cores raised the viewer's frame p99 by a third,
// where an app's own target has room for it.
bool DecodeThreadGovernor::wants_surge() const {
    const Window& w = backlog_run_;
    if (!settings_.surge || settings_.frame_ms_target <= 0 || surge_spent_ || trial_ ||
        cooldown_ > 0 || active_ >= settings_.pool_threads) {
        return false;
    }
    if (w.updates < settings_.surge_updates || w.seconds < settings_.surge_seconds ||
        w.backlog_updates < w.updates || w.decoded_pages == 0 ||
        w.busy_seconds < settings_.busy_share * w.seconds * double(active_)) {
        return false;
    }
    return std::all_of(w.frames_ms.begin(), w.frames_ms.end(),
                       [&](double ms) { return ms <= settings_.frame_ms_target; });
}

// The rest of the pool on trial, measured against the backlog's updates that wanted it; the
// trial's window starts now.
DecodeThreadChange DecodeThreadGovernor::start_surge() {
    const Outcome before = summarize(backlog_run_);
    window_.clear();
    surging_ = true;
    surge_over_in_a_row_ = 0;
    ++statistics_.surges;
    return start_trial(before, settings_.pool_threads - active_);
}

DecodeThreadChange DecodeThreadGovernor::take_back_trial() {
    trial_ = false;
    if (surging_) surge_spent_ = true;
    surging_ = false;
    active_ -= trial_added_;
    step_ = 1;
    ++statistics_.taken_back;
    ++failed_in_a_row_;
    start_cooldown(settings_.cooldown_windows);
    return DecodeThreadChange::taken_back;
}

// Pages kept waiting for decode, the active threads were busy and the frames within the target:
// a thread more may decode faster.
bool DecodeThreadGovernor::wants_thread(const Outcome& done) const {
    return active_ < settings_.pool_threads && done.pages_per_second > 0 && done.backlog &&
           done.busy && frames_within_target(done);
}

// The trial's thread stays only if decoding got faster by more than min_gain, and the frames
// stayed within the target (or, without one given or measured, their tail did not grow by more than
// max_frame_rise).
DecodeThreadChange DecodeThreadGovernor::end_trial(const Outcome& trial) {
    trial_ = false;
    const bool faster =
        trial.pages_per_second > before_trial_.pages_per_second * (1 + settings_.min_gain);
    bool frames_fine = frames_within_target(trial);
    if (target_ms() <= 0 && trial.frame_ms >= 0 && before_trial_.frame_ms >= 0) {
        frames_fine = trial.frame_ms <= before_trial_.frame_ms * (1 + settings_.max_frame_rise);
    }
    if (!faster || !frames_fine) return take_back_trial();
    surging_ = false;
    ++statistics_.kept;
    failed_in_a_row_ = 0;
    step_ = std::min(step_ * 2, settings_.pool_threads);
    // The trial's window is the next one's window before: a backlog that lasts is not measured
    // twice per step.
    if (wants_thread(trial)) return start_trial(trial, step_);
    return DecodeThreadChange::kept;
}

// Twice as long after each trial in a row that did not help.
void DecodeThreadGovernor::start_cooldown(std::uint32_t windows) {
    const std::uint32_t failed = std::min<std::uint32_t>(failed_in_a_row_, 5);
    cooldown_ = doubled_cooldown(windows, failed > 0 ? failed - 1 : 0);
}

}  // namespace vtpage::vt
