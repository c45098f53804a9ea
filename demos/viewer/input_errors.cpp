#include "input_errors.hpp"

namespace vtpage::viewer {

bool InputErrors::is_input_error(const Error& error) noexcept {
    return error.code() == Errc::corrupt_data || error.code() == Errc::io_error;
}

bool InputErrors::record(const Error& error) {
    if (!is_input_error(error)) return false;
    std::lock_guard lock(mutex_);
    if (messages_.size() < kept) messages_.insert(error.detail());
    return true;
}

std::uint64_t InputErrors::count() const {
    std::lock_guard lock(mutex_);
    return messages_.size();
}

std::string InputErrors::summary(const std::string& texture) const {
    std::lock_guard lock(mutex_);
    if (messages_.empty()) return {};
    std::string text = detail::concat(messages_.size(), messages_.size() == 1 ? " read" : " reads",
                                      " of ", texture, " failed: ");
    std::size_t shown = 0;
    for (const std::string& message : messages_) {
        if (shown == printed) break;
        text += (shown++ ? "; " : "") + message;
    }
    if (messages_.size() > shown) {
        text += detail::concat("; and ", messages_.size() - shown, " more");
    }
    return text;
}

}  // namespace vtpage::viewer
