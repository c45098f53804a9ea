// The one rule for numeric flags of every vtpage program: a value is finite and within its
// range, and a count is a plain whole number, so that no flag can run a program forever, wrap
// around or overflow a conversion. A value that breaks the rule is a bad flag (exit 2, with a
// message naming the flag), like any other.
//
//   app.add_option("--threads", threads)->check(app::count_in(1, 256));
//   app.add_option("--seconds", seconds)->check(app::number_in(0.001, 86400.0));
//
// CLI11 alone lets through what these catch: "nan" passes every Range (each comparison is
// false), "-1" parses into an unsigned option by wrapping around, "1e300" seconds overflows the
// conversion to an integer duration, and "010" reads as octal.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <limits>

namespace vtpage::app {

// A whole number in [min, max] written in plain decimal digits: no sign, no fraction, no
// exponent, no hexadecimal or octal prefix ("0" itself is fine).
CLI::Validator count_in(std::uint64_t min, std::uint64_t max);

// A whole number in [min, max], negative ones with a leading '-' ("-3"), otherwise as count_in:
// plain decimal digits, no '+', no leading zero ("-0" is refused too).
CLI::Validator integer_in(std::int64_t min, std::int64_t max);

// Refuses 0, for a range that has no zero: ->check(integer_in(-10, 19))->check(not_zero()).
CLI::Validator not_zero();

// Any whole number in [0, the largest value of T] (seeds, ids): "-1" is refused, not wrapped.
template <typename T>
CLI::Validator any_count() {
    return count_in(0, std::uint64_t(std::numeric_limits<T>::max()));
}

// A finite real number in [min, max] ("nan", "inf" and out-of-range values are refused).
CLI::Validator number_in(double min, double max);

// The longest time a flag may ask for: a year. Durations within it convert to integer
// nanoseconds (and so to every coarser unit) without overflow.
inline constexpr double max_seconds = 365.0 * 24 * 3600;

// seconds (finite, in [0, max_seconds], as number_in(0, max_seconds) lets through) as a
// duration; clamped into that range for any other value, so that no conversion overflows.
std::chrono::nanoseconds to_duration(double seconds);

}  // namespace vtpage::app
