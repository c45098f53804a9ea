#include "interop/decode_thread_governance.hpp"

namespace vtpage {

DecodeThreadGovernance::DecodeThreadGovernance(vt::DecodeThreadGovernorSettings settings)
    : settings_(settings) {
    settings.pool_threads = 1;
    settings.initial_threads = 1;
    vt::DecodeThreadGovernor checked(settings);  // refuses what it could not follow, now
}

void DecodeThreadGovernance::start(const vt::DecodeThreadLoad& load, Clock::time_point now) {
    vt::DecodeThreadGovernorSettings settings = settings_;
    settings.pool_threads = load.pool;
    settings.initial_threads = load.active;
    governor_ = std::make_unique<vt::DecodeThreadGovernor>(settings);
    last_ = load;
    last_time_ = now;
    std::lock_guard lock(mutex_);
    governed_ = true;
}

void DecodeThreadGovernance::govern(vt::Streamer& streamer, double frame_ms) {
    const vt::DecodeThreadLoad load = streamer.decode_threads();
    const auto now = Clock::now();
    if (!load.automatic) return;
    if (!governor_) return start(load, now);
    const vt::DecodeThreadInput input{
        .seconds = std::chrono::duration<double>(now - last_time_).count(),
        .frame_ms = frame_ms,
        .waiting_pages = load.waiting_pages,
        .decoded_pages = load.decoded_pages - last_.decoded_pages,
        .busy_seconds = load.busy_seconds - last_.busy_seconds};
    last_ = load;
    last_time_ = now;
    const vt::DecodeThreadDecision decision = governor_->update(input);
    if (decision.active_threads != load.active) {
        streamer.set_active_decode_threads(decision.active_threads);
    }
    std::lock_guard lock(mutex_);
    statistics_ = governor_->statistics();
}

bool DecodeThreadGovernance::governed() const {
    std::lock_guard lock(mutex_);
    return governed_;
}

vt::DecodeThreadGovernorStatistics DecodeThreadGovernance::statistics() const {
    std::lock_guard lock(mutex_);
    return statistics_;
}

}  // namespace vtpage
