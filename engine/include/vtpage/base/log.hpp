// Logging goes through a callback the application owns. There is no global logger: every object
// that logs takes a Log in its settings, and a default-constructed Log writes warnings and errors
// to stderr.
#pragma once

#include <functional>
#include <string_view>

#include "vtpage/base/error.hpp"

namespace vtpage {

enum class LogLevel { debug, info, warning, error };

std::string_view to_string(LogLevel level) noexcept;

using LogCallback = std::function<void(LogLevel, std::string_view message)>;

// Writes "vtpage [level] message" lines to stderr for messages at or above min_level.
LogCallback stderr_log(LogLevel min_level = LogLevel::warning);

// Drops every message.
LogCallback silent_log();

// A small value type around the callback, with one helper per level.
class Log {
public:
    Log() : callback_(stderr_log()), chosen_(false) {}
    explicit Log(LogCallback callback) : callback_(std::move(callback)) {}

    // This log if the app chose one, else `fallback`: how one Log given to an object that
    // owns others reaches the parts whose settings left theirs as it was.
    const Log& or_else(const Log& fallback) const noexcept { return chosen_ ? *this : fallback; }

    template <typename... Parts>
    void debug(const Parts&... parts) const {
        write(LogLevel::debug, parts...);
    }
    template <typename... Parts>
    void info(const Parts&... parts) const {
        write(LogLevel::info, parts...);
    }
    template <typename... Parts>
    void warning(const Parts&... parts) const {
        write(LogLevel::warning, parts...);
    }
    template <typename... Parts>
    void error(const Parts&... parts) const {
        write(LogLevel::error, parts...);
    }

    const LogCallback& callback() const noexcept { return callback_; }

private:
    template <typename... Parts>
    void write(LogLevel level, const Parts&... parts) const {
        if (callback_) callback_(level, detail::concat(parts...));
    }
    LogCallback callback_;
    bool chosen_ = true;  // false for the default one
};

}  // namespace vtpage
