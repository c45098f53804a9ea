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
    check(s.over_target_updates > 0, "over_target_updates must not be 0");
}

bool measured(double frame_ms) { return std::isfinite(frame_ms) && frame_ms >= 0; }

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
    if (frames_over_target(input)) {
        change = remove_thread();
    } else if (window_.seconds >= settings_.window_seconds &&
               window_.updates >= settings_.window_updates) {
        change = end_window();
    }
    return {active_, change};
}

void DecodeThreadGovernor::measure(const DecodeThreadInput& input) {
    window_.seconds += input.seconds;
    ++window_.updates;
    if (input.waiting_pages > 0) ++window_.backlog_updates;
    window_.decoded_pages += input.decoded_pages;
    if (std::isfinite(input.busy_seconds) && input.busy_seconds > 0) {
        window_.busy_seconds += input.busy_seconds;
    }
    if (measured(input.frame_ms)) window_.frames_ms.push_back(input.frame_ms);
}

// The window's figures, and a fresh window.
DecodeThreadGovernor::Outcome DecodeThreadGovernor::outcome() {
    const Window& w = window_;
    Outcome done;
    done.pages_per_second = w.seconds > 0 ? double(w.decoded_pages) / w.seconds : 0;
    done.backlog = w.backlog_updates >= settings_.backlog_share * w.updates;
    done.busy = w.busy_seconds >= settings_.busy_share * w.seconds * double(active_);
    if (!w.frames_ms.empty()) {
        std::vector<double>& frames = window_.frames_ms;
        const auto rank =
            std::size_t(std::ceil(settings_.frame_percentile * double(frames.size() - 1)));
        std::nth_element(frames.begin(), frames.begin() + std::ptrdiff_t(rank), frames.end());
        done.frame_ms = frames[rank];
    }
    window_.clear();
    return done;
}

bool DecodeThreadGovernor::frames_within_target(const Outcome& done) const {
    return settings_.frame_ms_target <= 0 || done.frame_ms <= settings_.frame_ms_target;
}

// Frames over the target while decoding, over_target_updates in a row. A frame over the target
// with nothing decoded is not the decode threads' doing.
bool DecodeThreadGovernor::frames_over_target(const DecodeThreadInput& input) {
    if (settings_.frame_ms_target <= 0 || !measured(input.frame_ms)) return false;
    const bool decoding = input.decoded_pages > 0 || input.busy_seconds > 0;
    if (input.frame_ms > settings_.frame_ms_target && decoding) {
        ++over_in_a_row_;
    } else {
        over_in_a_row_ = 0;
    }
    return over_in_a_row_ >= settings_.over_target_updates;
}

DecodeThreadChange DecodeThreadGovernor::remove_thread() {
    over_in_a_row_ = 0;
    window_.clear();
    if (trial_) return take_back_trial();  // the trial slowed the frames: as one that did not help
    start_cooldown(settings_.cooldown_windows);
    if (active_ <= 1) return DecodeThreadChange::none;
    --active_;
    ++statistics_.removed;
    return DecodeThreadChange::removed;
}

DecodeThreadChange DecodeThreadGovernor::end_window() {
    ++statistics_.windows;
    const Outcome done = outcome();
    statistics_.last_pages_per_second = done.pages_per_second;
    if (trial_) return end_trial(done);
    if (cooldown_ > 0) {
        --cooldown_;
        return DecodeThreadChange::none;
    }
    if (!wants_thread(done)) return DecodeThreadChange::none;
    return start_trial(done);
}

DecodeThreadChange DecodeThreadGovernor::start_trial(const Outcome& before) {
    before_trial_ = before;
    trial_ = true;
    trial_added_ = std::min(step_, settings_.pool_threads - active_);
    active_ += trial_added_;
    ++statistics_.trials;
    return DecodeThreadChange::trial;
}

DecodeThreadChange DecodeThreadGovernor::take_back_trial() {
    trial_ = false;
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
// stayed within the target (or, without one, their tail did not grow by more than
// max_frame_rise).
DecodeThreadChange DecodeThreadGovernor::end_trial(const Outcome& trial) {
    trial_ = false;
    const bool faster =
        trial.pages_per_second > before_trial_.pages_per_second * (1 + settings_.min_gain);
    bool frames_fine = frames_within_target(trial);
    if (settings_.frame_ms_target <= 0 && trial.frame_ms >= 0 && before_trial_.frame_ms >= 0) {
        frames_fine = trial.frame_ms <= before_trial_.frame_ms * (1 + settings_.max_frame_rise);
    }
    if (!faster || !frames_fine) return take_back_trial();
    ++statistics_.kept;
    failed_in_a_row_ = 0;
    step_ = std::min(step_ * 2, settings_.pool_threads);
    // The trial's window is the next one's window before: a backlog that lasts is not measured
    // twice per step.
    if (wants_thread(trial)) return start_trial(trial);
    return DecodeThreadChange::kept;
}

// Twice as long after each trial in a row that did not help.
void DecodeThreadGovernor::start_cooldown(std::uint32_t windows) {
    const std::uint32_t doublings = std::min<std::uint32_t>(failed_in_a_row_, 5);
    const std::uint64_t longer = std::uint64_t(windows) << (doublings > 0 ? doublings - 1 : 0);
    cooldown_ =
        std::uint32_t(std::min<std::uint64_t>(longer, std::max(longest_cooldown_windows, windows)));
}

}  // namespace vtpage::vt
