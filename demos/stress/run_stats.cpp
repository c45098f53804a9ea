#include "run_stats.hpp"

namespace vtpage::stress {

std::string_view to_string(OpKind kind) noexcept {
    switch (kind) {
        case OpKind::access:
            return "access";
        case OpKind::commit:
            return "commit";
        case OpKind::verify:
            return "verify";
        case OpKind::prefetch:
            return "prefetch";
        case OpKind::evict:
            return "evict";
    }
    return "?";
}

void RunStats::keep(const std::string& message) {
    constexpr std::size_t kept = 20;
    std::lock_guard lock(mutex_);
    if (problems_.size() < kept) problems_.push_back(message);
}

void RunStats::integrity_error(const std::string& message) {
    ++integrity_errors;
    keep("integrity: " + message);
}

void RunStats::unexpected_error(const std::string& message) {
    ++unexpected_errors;
    keep("unexpected: " + message);
}

std::vector<std::string> RunStats::problems() const {
    std::lock_guard lock(mutex_);
    return problems_;
}

}  // namespace vtpage::stress
