#include "streaming/streamer/error_log.hpp"

#include <mutex>

namespace vtpage::vt::streamer_detail {

void ErrorLog::record(const std::exception_ptr& error) {
    {
        std::lock_guard lock(mutex_);
        ++count_;
        if (kept_.size() < kept_errors) kept_.push_back(error);
    }
    report(error);
}

std::exception_ptr ErrorLog::take() {
    std::lock_guard lock(mutex_);
    if (kept_.empty()) return nullptr;
    std::exception_ptr error = kept_.front();
    kept_.pop_front();
    return error;
}

std::uint64_t ErrorLog::count() const {
    std::lock_guard lock(mutex_);
    return count_;
}

// Logs the error; the app's on_error gets a vtpage Error (others as backend failures).
void ErrorLog::report(const std::exception_ptr& error) const {
    try {
        std::rethrow_exception(error);
    } catch (const Error& e) {
        settings_.log.error("streamer: ", e.what());
        call_on_error(e);
    } catch (const std::exception& e) {
        settings_.log.error("streamer: ", e.what());
        call_on_error(Error(Errc::backend_failure, "Streamer", e.what()));
    } catch (...) {
        settings_.log.error("streamer: a worker failed with an unknown exception");
    }
}

void ErrorLog::call_on_error(const Error& error) const {
    if (!settings_.on_error) return;
    try {
        settings_.on_error(error);
    } catch (const std::exception& thrown) {
        settings_.log.error("streamer: on_error threw: ", thrown.what());
    }
}

}  // namespace vtpage::vt::streamer_detail
