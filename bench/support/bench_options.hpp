// What every benchmark takes on its command line and how it runs: --backend, --json and
// --quick (with the exit status rules of vtpage/app/command_line.hpp), the backend it measures,
// and its repeated measurements.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>

#include "vtpage/app/numeric_options.hpp"  // every benchmark's numeric flags follow its rule
#include "vtpage/backend/backend_factory.hpp"

namespace vtpage::bench {

struct BenchOptions {
    std::string backend = "auto";
    std::string json;    // where to write the results as JSON; empty: nowhere
    bool quick = false;  // a short smoke run (CI): small sizes, one repeat, no goals judged
};

// Adds --backend, --json (checked to be writable before the run) and --quick.
void add_bench_options(CLI::App& app, BenchOptions& options);

// The backend to measure, by name ("auto": the GPU when there is one).
std::unique_ptr<Backend> make_bench_backend(const std::string& name, Log log = {});

// Runs measure(r) for r in [0, repeats), with a progress bar ("measuring ... repeat 2 of 5") on
// stderr that is taken off the terminal before the tables.
void run_repeats(int repeats, const std::function<void(int repeat)>& measure);

}  // namespace vtpage::bench
