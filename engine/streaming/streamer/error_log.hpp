// The streamer's errors: each is logged and passed to on_error as it happens, and the first of
// them are kept for take_error(). A failed page, batch or texture records its error here from
// whichever thread found it.
//
// Lock: mutex_ (rank streamer_errors, the last of the library's): held only to count and keep
// an error, never while logging or calling on_error.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>

#include "base/ranked_mutex.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

class ErrorLog {
public:
    explicit ErrorLog(const StreamerSettings& settings) : settings_(settings) {}

    // Counts and keeps `error` (the first 64 waiting), then logs it and calls on_error.
    void record(const std::exception_ptr& error);
    // The oldest error kept, taken off the log; null when none waits.
    std::exception_ptr take();
    std::uint64_t count() const;

private:
    void report(const std::exception_ptr& error) const;
    void call_on_error(const Error& error) const;

    static constexpr std::size_t kept_errors = 64;
    const StreamerSettings& settings_;
    mutable detail::RankedMutex mutex_{detail::LockRank::streamer_errors, "streamer errors"};
    std::deque<std::exception_ptr> kept_;  // guarded by mutex_
    std::uint64_t count_ = 0;              // guarded by mutex_
};

}  // namespace vtpage::vt::streamer_detail
