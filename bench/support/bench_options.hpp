// What every benchmark takes on its command line and how it starts: --backend, --json and
// --quick, the exit status rules of the programs (vtpage/app/command_line.hpp), and the backend
// it measures.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

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

}  // namespace vtpage::bench
