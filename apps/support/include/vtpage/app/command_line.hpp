// The conventions every vtpage command-line program keeps:
//
//   exit 0   done (or --help or --version printed)
//   exit 1   the work failed: a check found a problem, or an unexpected error
//   exit 2   bad flags or bad input: "<program>: <what is wrong>" on stderr
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace vtpage::app {

inline constexpr int exit_success = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

// Parses the command line into `app`, which is made with the program's name
// (CLI::App{description, "vtpage-tool"}), and gives it --version. Returns std::nullopt when the
// program goes on, or the status to exit with: 0 after --help or --version, exit_usage after a
// bad flag, with the problem and a hint on stderr. `check` runs after parsing, for what CLI11's
// validators cannot say (flags that must agree with each other); it throws CLI::ValidationError,
// reported like a bad flag.
[[nodiscard]] std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                                    const std::function<void()>& check = {});

// "<program> <project version>": what --version prints.
std::string version_line(std::string_view program);

// --version: prints version_line(program) on stdout and exits 0. parse_command_line adds it
// (with the app's name); a program that parses its command line itself adds it here and catches
// CLI::CallForVersion.
CLI::Option* add_version_flag(CLI::App& app, std::string_view program);

// Prints "<program>: <message>" on stderr and returns `status`: for what is found after the
// flags are parsed (bad input: exit_usage; a failure: exit_failure).
int report(std::string_view program, int status, std::string_view message);

// --backend: auto (the GPU when there is one), cuda or host.
CLI::Option* add_backend_option(CLI::App& app, std::string& backend);

// Checks an output path before the work starts, so that a long run does not end on a path it
// cannot write: its folder must exist and be writable (and the file, where it exists).
CLI::Validator writable_file();

}  // namespace vtpage::app
