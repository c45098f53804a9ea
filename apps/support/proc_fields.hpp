// Reading the space-separated fields of /proc's text files (cpu_usage.cpp, thread_cpu.cpp).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

namespace vtpage::app::detail {

// The next field of `text` (spaces, tabs and newlines between fields), taken off its front;
// empty when none is left.
inline std::string_view next_field(std::string_view& text) {
    constexpr std::string_view blanks = " \t\n";
    const std::size_t start = text.find_first_not_of(blanks);
    if (start == std::string_view::npos) {
        text = {};
        return {};
    }
    text.remove_prefix(start);
    const std::size_t end = std::min(text.find_first_of(blanks), text.size());
    const std::string_view field = text.substr(0, end);
    text.remove_prefix(end);
    return field;
}

// `field` as a count: plain digits that fit 64 bits, nothing else.
inline bool parse_count(std::string_view field, std::uint64_t& value) {
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    return !field.empty() && error == std::errc{} && end == field.data() + field.size();
}

}  // namespace vtpage::app::detail
