#include "vtpage/app/numeric_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace vtpage::app {

namespace {

std::string range_text(const std::string& low, const std::string& high) {
    return "[" + low + ", " + high + "]";
}

// "%g" for doubles: "0.001", "86400", "3.15e+07".
std::string number_text(double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", value);
    return text;
}

}  // namespace

CLI::Validator count_in(std::uint64_t min, std::uint64_t max) {
    const std::string range = range_text(std::to_string(min), std::to_string(max));
    return CLI::Validator(
        [min, max, range](std::string& text) -> std::string {
            const std::string wanted = "a whole number in " + range;
            // CLI11 converts with strtoull(base 0): digits alone keep it from wrapping a sign,
            // reading hexadecimal, or octal for a leading zero.
            const bool digits =
                !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || (text.size() > 1 && text[0] == '0')) {
                return "'" + text + "' is not " + wanted;
            }
            std::uint64_t value = 0;
            const char* last = text.data() + text.size();
            const auto [end, error] = std::from_chars(text.data(), last, value);
            if (error != std::errc() || end != last || value < min || value > max) {
                return text + " is not " + wanted;
            }
            return {};
        },
        "COUNT in " + range);
}

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
    const std::string range = range_text(std::to_string(min), std::to_string(max));
    return CLI::Validator(
        [min, max, range](std::string& text) -> std::string {
            const std::string wanted = "a whole number in " + range;
            const std::size_t first = !text.empty() && text[0] == '-' ? 1 : 0;
            const std::string digits = text.substr(first);
            const bool plain =
                !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                (digits.size() == 1 || digits[0] != '0') && !(first == 1 && digits == "0");
            if (!plain) return "'" + text + "' is not " + wanted;
            std::int64_t value = 0;
            const char* last = text.data() + text.size();
            const auto [end, error] = std::from_chars(text.data(), last, value);
            if (error != std::errc() || end != last || value < min || value > max) {
                return text + " is not " + wanted;
            }
            return {};
        },
        "INTEGER in " + range);
}

CLI::Validator not_zero() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            return text == "0" ? std::string("0 is not one of the values (no zero)") : "";
        },
        "not 0");
}

CLI::Validator number_in(double min, double max) {
    const std::string range = range_text(number_text(min), number_text(max));
    return CLI::Validator(
        [min, max, range](std::string& text) -> std::string {
            const std::string wanted = "a finite number in " + range;
            char* end = nullptr;
            const double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
                return "'" + text + "' is not " + wanted;
            }
            // Written so that NaN could not pass either: both comparisons must hold.
            if (!(value >= min && value <= max)) return text + " is not " + wanted;
            return {};
        },
        "NUMBER in " + range);
}

std::chrono::nanoseconds to_duration(double seconds) {
    if (!(seconds > 0)) return std::chrono::nanoseconds(0);  // negative, zero and NaN
    if (seconds > max_seconds) seconds = max_seconds;
    return std::chrono::nanoseconds(std::int64_t(seconds * 1e9));
}

}  // namespace vtpage::app
