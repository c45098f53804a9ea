#include "streaming/io/fault_injecting_file_layer.hpp"

#include <cerrno>

namespace vtpage::vt {

FaultInjectingFileLayer::FaultInjectingFileLayer(FaultInjectingFileLayerSettings settings)
    : settings_(settings), random_(settings.seed) {}

void FaultInjectingFileLayer::fail_at(int fd, std::uint64_t offset, int error,
                                      std::uint64_t times) {
    std::lock_guard lock(mutex_);
    scripted_.push_back(ScriptedFault{fd, offset, ReadDecision::fail(error), times});
}

void FaultInjectingFileLayer::shorten_at(int fd, std::uint64_t offset, std::size_t bytes,
                                         std::uint64_t times) {
    std::lock_guard lock(mutex_);
    scripted_.push_back(ScriptedFault{fd, offset, ReadDecision::shorten(bytes), times});
}

void FaultInjectingFileLayer::hold() {
    std::lock_guard lock(mutex_);
    holding_ = true;
}

void FaultInjectingFileLayer::release() {
    {
        std::lock_guard lock(mutex_);
        holding_ = false;
    }
    released_.notify_all();
}

std::size_t FaultInjectingFileLayer::held() const {
    std::lock_guard lock(mutex_);
    return held_;
}

std::uint64_t FaultInjectingFileLayer::attempts() const {
    std::lock_guard lock(mutex_);
    return attempts_;
}

std::uint64_t FaultInjectingFileLayer::injected() const {
    std::lock_guard lock(mutex_);
    return injected_;
}

ReadDecision FaultInjectingFileLayer::decide(const ReadAttempt& attempt) {
    std::unique_lock lock(mutex_);
    wait_while_held(lock);
    ++attempts_;
    ReadDecision decision;
    if (!scripted_nolock(attempt, decision)) decision = periodic_nolock(attempt);
    if (decision.action != ReadDecision::Action::pass) ++injected_;
    return decision;
}

void FaultInjectingFileLayer::wait_while_held(std::unique_lock<std::mutex>& lock) {
    ++held_;
    released_.wait(lock, [&] { return !holding_; });
    --held_;
}

bool FaultInjectingFileLayer::scripted_nolock(const ReadAttempt& attempt, ReadDecision& decision) {
    for (auto fault = scripted_.begin(); fault != scripted_.end(); ++fault) {
        if (fault->fd != attempt.fd || fault->offset != attempt.offset) continue;
        decision = fault->decision;
        if (fault->times == 1) {
            scripted_.erase(fault);
        } else if (fault->times > 1) {
            --fault->times;
        }
        return true;
    }
    return false;
}

ReadDecision FaultInjectingFileLayer::periodic_nolock(const ReadAttempt& attempt) {
    const auto every = [&](std::uint64_t n) { return n != 0 && attempts_ % n == 0; };
    if (every(settings_.eio_every)) return ReadDecision::fail(EIO);
    if (every(settings_.eagain_every)) return ReadDecision::fail(EAGAIN);
    if (every(settings_.eintr_every)) return ReadDecision::fail(EINTR);
    if (every(settings_.short_read_every) && attempt.size > 1) {
        // A random length short of the whole: the read must be continued.
        return ReadDecision::shorten(1 + std::size_t(random_() % (attempt.size - 1)));
    }
    return ReadDecision::pass();
}

}  // namespace vtpage::vt
