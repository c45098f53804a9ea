// vtpage-gpu-pressure: takes GPU memory the way another process would, for benchmarks that
// measure paging under memory pressure, then holds it until told to let go.
//
//   vtpage-gpu-pressure --mib 8192                  take 8 GiB in steps of 256 MiB
//   vtpage-gpu-pressure --leave-free-mib 1024       take all but 1 GiB of what is free
//
// One line per step on stdout ("allocated X MiB, device free Y MiB"), then "holding X MiB";
// the hold ends after --hold-seconds, at a line "release" or the end of stdin, or at SIGTERM
// (also sent when the parent dies); then "released" and exit 0. A step the device has no memory
// for ends the allocation early and the program holds what it has. Keep stdin open for the hold
// (a pipe from the benchmark): its end lets the memory go.
//
// Exit status: 0 released, 1 a CUDA call failed, 2 bad flags, 3 no CUDA driver or device.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "cuda_memory.hpp"
#include "release_wait.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/base/error.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::gpu_pressure;

constexpr const char* program = "vtpage-gpu-pressure";
constexpr int exit_no_device = 3;
constexpr std::uint64_t mib = std::uint64_t(1) << 20;
constexpr std::uint64_t max_mib = std::uint64_t(1) << 22;  // 4 TiB, beyond any GPU

struct Options {
    int device = 0;
    std::optional<std::uint64_t> target_mib;
    std::uint64_t step_mib = 256;
    double hold_seconds = 60;
    std::optional<std::uint64_t> leave_free_mib;
};

// A line on stdout, flushed at once: a benchmark reads it as it comes.
void say(const std::string& line) {
    std::fputs((line + "\n").c_str(), stdout);
    std::fflush(stdout);
}

// The next step's bytes: a full step, or what is left to reach --mib or --leave-free-mib
// (0: the allocation is done).
std::uint64_t next_step(const Options& options, const CudaMemory& memory) {
    std::uint64_t step = options.step_mib * mib;
    if (options.target_mib) {
        const std::uint64_t target = *options.target_mib * mib;
        step = std::min(step, target - std::min(target, memory.allocated_bytes()));
    }
    if (options.leave_free_mib) {
        const std::uint64_t free = memory.free_bytes();
        const std::uint64_t keep = *options.leave_free_mib * mib;
        // Whole 2 MiB units (the driver's granularity): smaller steps may not lower what is
        // free, and the loop would not end.
        step = std::min(step, (free - std::min(free, keep)) / (2 * mib) * (2 * mib));
    }
    return step;
}

// Allocates step by step until the target, the end of free memory or a signal.
void take_memory(const Options& options, CudaMemory& memory) {
    while (!signalled()) {
        const std::uint64_t step = next_step(options, memory);
        if (step == 0) return;
        if (!memory.allocate(step)) {
            say(detail::concat("out of memory: a step of ", step / mib, " MiB failed after ",
                               memory.allocated_bytes() / mib, " MiB; holding what was allocated"));
            return;
        }
        say(detail::concat("allocated ", memory.allocated_bytes() / mib, " MiB, device free ",
                           memory.free_bytes() / mib, " MiB"));
    }
}

int run(const Options& options) {
    install_release_signals();
    std::optional<CudaMemory> memory;
    try {
        memory.emplace(options.device);
    } catch (const Error& error) {
        return app::report(program, exit_no_device,
                           "no GPU to take memory from: " + error.detail());
    }
    try {
        take_memory(options, *memory);
        say(detail::concat("holding ", memory->allocated_bytes() / mib, " MiB"));
        const Release reason = wait_for_release(std::chrono::steady_clock::now() +
                                                app::to_duration(options.hold_seconds));
        memory->free_all();
        say("released");
        std::fprintf(stderr, "%s: released after %s\n", program, to_string(reason));
    } catch (const std::exception& error) {  // a failed CUDA call, or no host memory left
        memory->free_all();
        return app::report(program, app::exit_failure, error.what());
    }
    return app::exit_success;
}

}  // namespace

static int parse_and_run(int argc, char** argv) {
    CLI::App app{
        "vtpage-gpu-pressure: takes GPU memory as another process would, holds it, "
        "then frees it",
        program};
    app.footer(
        "Exit status: 0 released; 1 a CUDA call failed; 2 bad flags; 3 no CUDA driver or "
        "device.");
    Options options;
    std::uint64_t device = 0;
    app.add_option("--device", device, "CUDA device ordinal")->check(app::count_in(0, 1024));
    app.add_option("--mib", options.target_mib, "MiB to allocate")
        ->check(app::count_in(1, max_mib));
    app.add_option("--step-mib", options.step_mib, "MiB per cuMemAlloc")
        ->check(app::count_in(1, max_mib));
    app.add_option("--hold-seconds", options.hold_seconds,
                   "Hold at most this long (a line 'release' or the end of stdin ends it sooner)")
        ->check(app::number_in(0, 3600));
    app.add_option("--leave-free-mib", options.leave_free_mib,
                   "Allocate until only this many MiB are free on the device")
        ->check(app::count_in(0, max_mib));
    if (auto status = app::parse_command_line(app, argc, argv, [&] {
            if (!options.target_mib && !options.leave_free_mib) {
                throw CLI::RequiredError("--mib or --leave-free-mib");
            }
        })) {
        return *status;
    }
    options.device = int(device);
    return run(options);
}

// What the program's own handling lets through (CLI11's errors in setting up the flags, say)
// ends it with a message and status 1 rather than std::terminate.
int main(int argc, char** argv) {
    try {
        return parse_and_run(argc, argv);
    } catch (const std::exception& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}
