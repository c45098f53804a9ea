#include "vtpage/base/log.hpp"

#include <cstdio>
#include <string>

namespace vtpage {

std::string_view to_string(LogLevel level) noexcept {
    switch (level) {
        case LogLevel::debug:
            return "debug";
        case LogLevel::info:
            return "info";
        case LogLevel::warning:
            return "warning";
        case LogLevel::error:
            return "error";
    }
    return "?";
}

LogCallback stderr_log(LogLevel min_level) {
    return [min_level](LogLevel level, std::string_view message) {
        if (level < min_level) return;
        // One fprintf per line keeps lines from different threads whole.
        std::string line =
            "vtpage [" + std::string(to_string(level)) + "] " + std::string(message) + "\n";
        std::fputs(line.c_str(), stderr);
    };
}

LogCallback silent_log() {
    return [](LogLevel, std::string_view) {};
}

}  // namespace vtpage
