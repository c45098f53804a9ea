// vtpage-bench-growable-buffer: growing a device buffer from 2 MiB to 16 GiB, by doubling and by
// fixed 256 MiB steps, with the ways a CUDA program can do it:
//
//   (a) cudaMalloc + cudaMemcpy + cudaFree      the copying vector: the baseline
//   (b) cudaMallocManaged + prefetch            managed memory of the final size, each new part
//                                               prefetched to the GPU as the buffer grows
//   (c) cudaMallocAsync + copy                  the stream-ordered pool, copying like (a)
//   (d) GrowableBuffer                          map on grow (vtpage, CUDA backend)
//   (e) GrowableBuffer, 2 MiB reservation       the same, starting with no spare address space:
//                                               extends its range in place or moves it (remap)
//
// Each step is timed up to a cudaDeviceSynchronize, so copies in flight count. A marker written
// after the first step is checked after the last: every method must keep the contents. Then each
// method grows in 256 MiB steps until it fails, to find the largest buffer it reaches, as a
// fraction of the free memory at the start (managed memory stops at 90% of it: oversubscribed
// managed memory can stall the GPU for minutes).
//
// Without a GPU (or with --backend host) the CUDA methods are skipped, and the GrowableBuffer
// runs on the host backend beside a copying host vector (new[] + memcpy + delete[]), so the smoke
// run still exercises the whole benchmark. bench/plot_growth.py draws the JSON (--json).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "support/bench_options.hpp"
#include "support/report_table.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/core/growable_buffer.hpp"

namespace {

using namespace vtpage;
using bench::fixed;
using nlohmann::json;

constexpr const char* program = "vtpage-bench-growable-buffer";

// A grower ran out of memory; the run stops there.
struct OutOfMemory {
    std::string detail;
};

// Any other CUDA failure ends the benchmark with its name.
[[noreturn]] void cuda_fail(cudaError_t error, const char* what) {
    throw Error(Errc::backend_failure, what, cudaGetErrorString(error), {}, error,
                cudaGetErrorName(error));
}

void cuda_check(cudaError_t error, const char* what) {
    if (error == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // not sticky: clear it so later calls do not report it again
        throw OutOfMemory{std::string(what) + ": " + cudaGetErrorName(error)};
    }
    if (error != cudaSuccess) cuda_fail(error, what);
}

constexpr std::size_t marker_bytes = 64 * 1024;
constexpr unsigned char marker_value = 0x5a;

// One way to grow a buffer. grow() makes it at least `bytes` long, keeping the contents; it
// throws OutOfMemory when the memory runs out (and then still holds the old buffer).
class Grower {
public:
    virtual ~Grower() = default;
    virtual void grow(std::size_t bytes) = 0;
    virtual void write_marker() = 0;
    virtual bool marker_kept() = 0;
    // Waits for work the grower queued (copies, prefetches).
    virtual void finish() {}
    virtual json details() const { return json::object(); }
};

bool all_marker(const std::vector<unsigned char>& bytes) {
    return std::all_of(bytes.begin(), bytes.end(),
                       [](unsigned char b) { return b == marker_value; });
}

// The buffer of (a) and (b): one allocation of the CUDA runtime, freed with cudaFree, which
// synchronous cudaMemset and cudaMemcpy reach.
class CudaAllocationGrower : public Grower {
public:
    ~CudaAllocationGrower() override {
        if (data_) cudaFree(data_);
    }
    void write_marker() override {
        cuda_check(cudaMemset(data_, marker_value, marker_bytes), "cudaMemset");
    }
    bool marker_kept() override {
        std::vector<unsigned char> back(marker_bytes);
        cuda_check(cudaMemcpy(back.data(), data_, marker_bytes, cudaMemcpyDeviceToHost),
                   "cudaMemcpy");
        return all_marker(back);
    }
    void finish() override { cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

protected:
    void* data_ = nullptr;
    std::size_t size_ = 0;
};

// (a) The copying vector.
class MallocCopyGrower final : public CudaAllocationGrower {
public:
    void grow(std::size_t bytes) override {
        void* fresh = nullptr;
        cuda_check(cudaMalloc(&fresh, bytes), "cudaMalloc");
        if (data_) {
            cudaError_t copied = cudaMemcpy(fresh, data_, size_, cudaMemcpyDeviceToDevice);
            if (copied != cudaSuccess) {
                cudaFree(fresh);
                cuda_fail(copied, "cudaMemcpy");
            }
            cuda_check(cudaFree(data_), "cudaFree");
        }
        data_ = fresh;
        size_ = bytes;
    }
};

// (b) Managed memory of the final size; growing prefetches the new part to the GPU.
class ManagedGrower final : public CudaAllocationGrower {
public:
    ManagedGrower(int device, std::size_t final_bytes) : device_(device) {
        cuda_check(cudaMallocManaged(&data_, final_bytes), "cudaMallocManaged");
        capacity_ = final_bytes;
    }
    void grow(std::size_t bytes) override {
        if (bytes > capacity_) {
            throw OutOfMemory{"the managed allocation is sized for the final buffer"};
        }
        cudaMemLocation location{};
        location.type = cudaMemLocationTypeDevice;
        location.id = device_;
        cuda_check(cudaMemPrefetchAsync(static_cast<char*>(data_) + size_, bytes - size_, location,
                                        0, nullptr),
                   "cudaMemPrefetchAsync");
        size_ = bytes;
    }

private:
    int device_;
    std::size_t capacity_ = 0;
};

// (c) The stream-ordered pool (default pool, release threshold 0: freed memory goes back to
// the device at each synchronisation, as it must for the buffer to reach its largest size).
class AsyncCopyGrower final : public Grower {
public:
    AsyncCopyGrower() {
        cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    ~AsyncCopyGrower() override {
        if (data_) cudaFreeAsync(data_, stream_);
        cudaStreamSynchronize(stream_);
        cudaStreamDestroy(stream_);
        int device = 0;
        cudaMemPool_t pool = nullptr;
        if (cudaGetDevice(&device) == cudaSuccess &&
            cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
            cudaMemPoolTrimTo(pool, 0);
        }
    }
    void grow(std::size_t bytes) override {
        void* fresh = nullptr;
        cuda_check(cudaMallocAsync(&fresh, bytes, stream_), "cudaMallocAsync");
        if (data_) {
            cuda_check(cudaMemcpyAsync(fresh, data_, size_, cudaMemcpyDeviceToDevice, stream_),
                       "cudaMemcpyAsync");
            cuda_check(cudaFreeAsync(data_, stream_), "cudaFreeAsync");
        }
        data_ = fresh;
        size_ = bytes;
    }
    void write_marker() override {
        cuda_check(cudaMemsetAsync(data_, marker_value, marker_bytes, stream_), "cudaMemsetAsync");
        finish();
    }
    bool marker_kept() override {
        std::vector<unsigned char> back(marker_bytes);
        cuda_check(
            cudaMemcpyAsync(back.data(), data_, marker_bytes, cudaMemcpyDeviceToHost, stream_),
            "cudaMemcpyAsync");
        finish();
        return all_marker(back);
    }
    void finish() override { cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

private:
    cudaStream_t stream_ = nullptr;
    void* data_ = nullptr;
    std::size_t size_ = 0;
};

// (d), (e) vtpage's GrowableBuffer, on whichever backend the run uses.
class GrowableGrower final : public Grower {
public:
    GrowableGrower(Backend& backend, GrowableBufferSettings settings, bool gpu)
        : buffer_(backend, std::move(settings)), gpu_(gpu) {}
    void grow(std::size_t bytes) override {
        try {
            buffer_.resize(bytes);
        } catch (const Error& error) {
            if (error.code() == Errc::out_of_memory) throw OutOfMemory{error.what()};
            throw;
        }
    }
    void write_marker() override {
        std::vector<unsigned char> marker(marker_bytes, marker_value);
        buffer_.write(0, marker.data(), marker.size());
    }
    bool marker_kept() override {
        std::vector<unsigned char> back(marker_bytes);
        buffer_.read(back.data(), 0, back.size());
        return all_marker(back);
    }
    void finish() override {
        if (gpu_) cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    json details() const override {
        auto stats = buffer_.statistics();
        return {{"allocations", stats.allocations},
                {"relocations", stats.relocations},
                {"in_place_extensions", stats.in_place_extensions},
                {"reserved_bytes", buffer_.reserved_bytes()}};
    }

private:
    GrowableBuffer buffer_;
    bool gpu_;
};

// The copying vector on the host, the baseline of a run without a GPU.
class HostCopyGrower final : public Grower {
public:
    void grow(std::size_t bytes) override {
        std::unique_ptr<unsigned char[]> fresh;
        try {
            fresh.reset(new unsigned char[bytes]);
        } catch (const std::bad_alloc&) {
            throw OutOfMemory{"new[] failed"};
        }
        if (data_) std::memcpy(fresh.get(), data_.get(), size_);
        data_ = std::move(fresh);
        size_ = bytes;
    }
    void write_marker() override { std::memset(data_.get(), marker_value, marker_bytes); }
    bool marker_kept() override {
        return std::all_of(data_.get(), data_.get() + marker_bytes,
                           [](unsigned char b) { return b == marker_value; });
    }

private:
    std::unique_ptr<unsigned char[]> data_;
    std::size_t size_ = 0;
};

// Progress over a known number of steps, on stderr (the tables go to stdout).
class StepProgress {
public:
    explicit StepProgress(std::size_t total) : total_(std::max<std::size_t>(total, 1)) {}
    void advance(const std::string& what) {
        done_ = std::min(done_ + 1, total_);
        bar_.update(double(done_) / double(total_), what);
    }
    // Takes the bar off the terminal before the tables.
    void clear() { bar_.clear(); }

private:
    app::ProgressBar bar_;
    std::size_t total_;
    std::size_t done_ = 0;
};

struct Method {
    std::string key;
    std::string name;
    // Makes a grower for a run whose largest size is final_bytes.
    std::function<std::unique_ptr<Grower>(std::size_t final_bytes)> make;
    std::string skipped;  // why the method does not run here; empty when it does
};

struct Schedule {
    std::string name;   // "doubling" or "fixed"
    std::string title;  // for tables
    std::vector<std::size_t> sizes;
};

struct RunResult {
    std::vector<double> step_ms;  // one per size reached
    std::size_t reached = 0;
    bool complete = false;
    std::string stopped;
    bool contents_kept = false;
    json details;
};

std::string mib_text(std::size_t bytes) {
    if (bytes >= 1_GiB && bytes % 1_GiB == 0) return std::to_string(bytes / 1_GiB) + " GiB";
    if (bytes >= 1_GiB) return fixed(double(bytes) / double(1_GiB), 2) + " GiB";
    return std::to_string(bytes / 1_MiB) + " MiB";
}

RunResult run_schedule(const Method& method, const Schedule& schedule, const std::string& label,
                       StepProgress& progress) {
    RunResult result;
    const std::size_t final_bytes = schedule.sizes.back();
    std::unique_ptr<Grower> grower;
    for (std::size_t step = 0; step < schedule.sizes.size(); ++step) {
        const std::size_t bytes = schedule.sizes[step];
        bench::Stopwatch watch;
        try {
            if (!grower) grower = method.make(final_bytes);  // the first step makes the buffer
            grower->grow(bytes);
            grower->finish();
        } catch (const OutOfMemory& oom) {
            result.stopped =
                "out of memory growing to " + mib_text(bytes) + " (" + oom.detail + ")";
            break;
        }
        result.step_ms.push_back(watch.seconds() * 1e3);
        result.reached = bytes;
        if (step == 0) grower->write_marker();
        progress.advance(label + ": (" + method.key + ") " + mib_text(bytes) + " of " +
                         mib_text(final_bytes));
    }
    result.complete = result.stopped.empty();
    if (grower && result.reached > 0) {
        result.contents_kept = grower->marker_kept();
        result.details = grower->details();
    }
    return result;
}

struct MaxResult {
    std::size_t reached = 0;
    std::string stopped;
};

// Grows in steps until the method fails or reaches cap.
MaxResult run_to_the_limit(const Method& method, std::size_t start, std::size_t step,
                           std::size_t cap) {
    MaxResult result;
    std::unique_ptr<Grower> grower;
    StepProgress progress(cap / step + 1);
    try {
        grower = method.make(cap);
        for (std::size_t bytes = start; bytes <= cap; bytes = (bytes / step + 1) * step) {
            grower->grow(bytes);
            grower->finish();
            result.reached = bytes;
            progress.advance("largest size: (" + method.key + ") " + mib_text(bytes) +
                             " of at most " + mib_text(cap));
        }
        result.stopped = "stopped at the cap (" + mib_text(cap) + ")";
    } catch (const OutOfMemory& oom) {
        result.stopped = "out of memory (" + oom.detail + ")";
    }
    progress.clear();
    return result;
}

// The median step time over [from, to) of the steps after the first (which makes the buffer).
double step_median(const std::vector<double>& steps, double from, double to) {
    if (steps.size() < 3) return steps.empty() ? 0.0 : steps.back();
    const std::size_t n = steps.size() - 1;
    auto first = std::size_t(double(n) * from),
         last = std::max(first + 1, std::size_t(double(n) * to));
    return bench::median(std::vector<double>(steps.begin() + 1 + first, steps.begin() + 1 + last));
}

struct Options : bench::BenchOptions {
    std::size_t start_mib = 2;
    std::size_t step_mib = 256;
    std::size_t max_mib = 16384;
    int repeats = 3;
    bool limit_run = true;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "vtpage growable buffer benchmark: growing a device buffer without copying, "
        "beside cudaMalloc + copy, managed memory and cudaMallocAsync",
        program};
    Options options;
    bench::add_bench_options(app, options);
    app.add_option("--start-mib", options.start_mib, "First size, MiB")
        ->check(app::count_in(1, 1 << 20));
    app.add_option("--step-mib", options.step_mib, "Fixed step, MiB")
        ->check(app::count_in(1, 1 << 20));
    app.add_option("--max-mib", options.max_mib, "Last size, MiB")
        ->check(app::count_in(1, 1 << 24));
    app.add_option("--repeats", options.repeats, "Runs of each schedule (medians are reported)")
        ->check(app::count_in(1, 100));
    app.add_flag("!--no-limit-run", options.limit_run,
                 "Skip the run to the largest size each method reaches");
    if (auto status = app::parse_command_line(app, argc, argv, [&] {
            if (options.max_mib < options.start_mib) {
                throw CLI::ValidationError("--max-mib", "must be at least --start-mib");
            }
        })) {
        return *status;
    }

    try {
        // Which machine: a GPU unless there is none or the host is asked for.
        std::string no_gpu;
        int device_count = 0;
        if (options.backend == "host") {
            no_gpu = "--backend host";
        } else if (cudaError_t e = cudaGetDeviceCount(&device_count); e != cudaSuccess) {
            no_gpu = cudaGetErrorString(e);
        } else if (device_count == 0) {
            no_gpu = "no CUDA device";
        }
        std::unique_ptr<Backend> backend;
        if (no_gpu.empty()) {
            BackendSettings settings;
            settings.name = "cuda";
            settings.probe = false;
            try {
                backend = make_backend(settings);
            } catch (const Error& error) {
                if (error.code() != Errc::device_unavailable &&
                    error.code() != Errc::not_supported) {
                    throw;
                }
                no_gpu = error.what();
            }
        }
        if (!no_gpu.empty() && options.backend == "cuda") {
            return app::report(program, app::exit_failure,
                               "--backend cuda: no usable GPU: " + no_gpu);
        }
        const bool gpu = no_gpu.empty();
        if (!gpu) {
            std::printf(
                "skipped: no GPU (%s): the CUDA methods (a)-(c) need one; growing the "
                "GrowableBuffer on the host backend instead\n",
                no_gpu.c_str());
            backend = make_backend({.name = "host"});
            options.limit_run = false;  // host memory is shared: never fill it
            if (!app.count("--max-mib")) options.max_mib = 1024;
            if (!app.count("--step-mib")) options.step_mib = 64;
        }
        if (options.quick) {
            options.repeats = 1;
            options.limit_run = false;
            options.max_mib = std::min<std::size_t>(options.max_mib, gpu ? 1024 : 64);
            options.step_mib = std::min<std::size_t>(options.step_mib, gpu ? 128 : 8);
        }
        const std::size_t start = options.start_mib * 1_MiB, step = options.step_mib * 1_MiB,
                          max = options.max_mib * 1_MiB;

        // The CUDA runtime works on the backend's device, in the same primary context.
        const int device = gpu ? backend->capabilities().device : 0;
        if (gpu) {
            cuda_check(cudaSetDevice(device), "cudaSetDevice");
            cuda_check(cudaFree(nullptr), "cudaFree(0)");  // start the runtime outside the timing
        }
        const MemoryInfo memory = backend->memory_info();
        const auto& caps = backend->capabilities();

        std::vector<Method> methods;
        Backend& b = *backend;
        if (gpu) {
            int managed = 0;
            cuda_check(cudaDeviceGetAttribute(&managed, cudaDevAttrConcurrentManagedAccess, device),
                       "cudaDeviceGetAttribute");
            int pools = 0;
            cuda_check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device),
                       "cudaDeviceGetAttribute");
            methods.push_back({"a", "cudaMalloc + cudaMemcpy + cudaFree",
                               [](std::size_t) { return std::make_unique<MallocCopyGrower>(); },
                               ""});
            methods.push_back({"b", "cudaMallocManaged + prefetch",
                               [device](std::size_t final_bytes) {
                                   return std::make_unique<ManagedGrower>(device, final_bytes);
                               },
                               managed ? "" : "the device lacks concurrent managed access"});
            methods.push_back({"c", "cudaMallocAsync + copy",
                               [](std::size_t) { return std::make_unique<AsyncCopyGrower>(); },
                               pools ? "" : "the device lacks memory pools"});
        } else {
            methods.push_back({"a", "host new[] + memcpy + delete[]",
                               [](std::size_t) { return std::make_unique<HostCopyGrower>(); }, ""});
        }
        methods.push_back({"d", "GrowableBuffer",
                           [&b, gpu](std::size_t) {
                               return std::make_unique<GrowableGrower>(b, GrowableBufferSettings{},
                                                                       gpu);
                           },
                           ""});
        methods.push_back({"e", "GrowableBuffer, 2 MiB reservation",
                           [&b, gpu, start](std::size_t) {
                               GrowableBufferSettings settings;
                               settings.address_space = start;
                               return std::make_unique<GrowableGrower>(b, settings, gpu);
                           },
                           ""});

        // The schedules: doubling from start, and start then fixed steps, both up to max.
        Schedule doubling{"doubling", "doubling from " + mib_text(start), {}};
        for (std::size_t s = start; s < max; s *= 2) doubling.sizes.push_back(s);
        doubling.sizes.push_back(max);
        Schedule fixed_steps{"fixed", mib_text(step) + " steps", {start}};
        for (std::size_t s = (start / step + 1) * step; s <= max; s += step) {
            fixed_steps.sizes.push_back(s);
        }
        if (fixed_steps.sizes.back() != max) fixed_steps.sizes.push_back(max);
        const std::vector<Schedule> schedules{doubling, fixed_steps};

        std::printf("growable buffer benchmark on %s (%s): %s of %s free; %s to %s, %d repeat%s\n",
                    caps.backend.c_str(), caps.device_name.c_str(), mib_text(memory.free).c_str(),
                    mib_text(memory.total).c_str(), mib_text(start).c_str(), mib_text(max).c_str(),
                    options.repeats, options.repeats == 1 ? "" : "s");
        for (const Method& method : methods) {
            if (!method.skipped.empty()) {
                std::printf("(%s) %s: skipped: %s\n", method.key.c_str(), method.name.c_str(),
                            method.skipped.c_str());
            }
        }

        // results[schedule][method] over repeats; methods alternate within each repeat.
        std::vector<std::vector<std::vector<RunResult>>> results(
            schedules.size(), std::vector<std::vector<RunResult>>(methods.size()));
        std::size_t total_steps = 0;
        for (const Method& method : methods) {
            if (!method.skipped.empty()) continue;
            for (const Schedule& schedule : schedules) total_steps += schedule.sizes.size();
        }
        StepProgress progress(total_steps * std::size_t(options.repeats));
        for (int repeat = 0; repeat < options.repeats; ++repeat) {
            for (std::size_t s = 0; s < schedules.size(); ++s) {
                for (std::size_t m = 0; m < methods.size(); ++m) {
                    if (!methods[m].skipped.empty()) continue;
                    const std::string label = schedules[s].title + ", repeat " +
                                              std::to_string(repeat + 1) + "/" +
                                              std::to_string(options.repeats);
                    results[s][m].push_back(
                        run_schedule(methods[m], schedules[s], label, progress));
                }
            }
        }
        progress.clear();

        // Per method and schedule: the median of each step over the repeats.
        struct Summary {
            std::vector<double> step_ms;
            double total_ms = 0;
            bool complete = true;
            bool contents_kept = true;
            std::string stopped;
            json details;
        };
        auto summarise = [&](std::size_t s, std::size_t m) {
            Summary summary;
            const auto& runs = results[s][m];
            if (runs.empty()) return summary;
            std::size_t steps = SIZE_MAX;
            std::vector<double> totals;
            for (const RunResult& run : runs) {
                steps = std::min(steps, run.step_ms.size());
                summary.complete = summary.complete && run.complete;
                summary.contents_kept = summary.contents_kept && run.contents_kept;
                if (!run.stopped.empty()) summary.stopped = run.stopped;
                double total = 0;
                for (double ms : run.step_ms) total += ms;
                totals.push_back(total);
            }
            for (std::size_t i = 0; i < steps; ++i) {
                std::vector<double> values;
                for (const RunResult& run : runs) values.push_back(run.step_ms[i]);
                summary.step_ms.push_back(bench::median(values));
            }
            summary.total_ms = bench::median(totals);
            summary.details = runs.back().details;
            return summary;
        };
        std::vector<std::vector<Summary>> summaries(schedules.size());
        for (std::size_t s = 0; s < schedules.size(); ++s) {
            for (std::size_t m = 0; m < methods.size(); ++m)
                summaries[s].push_back(summarise(s, m));
        }

        json tables = json::array();
        json runs = json::array();
        // One table per schedule: each step's time per method.
        for (std::size_t s = 0; s < schedules.size(); ++s) {
            std::vector<std::string> columns{"size"};
            for (const Method& method : methods) {
                if (method.skipped.empty()) columns.push_back("(" + method.key + ") ms");
            }
            bench::ReportTable table("Per step, " + schedules[s].title + " to " + mib_text(max) +
                                         " (ms, median of " + std::to_string(options.repeats) + ")",
                                     columns);
            for (std::size_t i = 0; i < schedules[s].sizes.size(); ++i) {
                std::vector<std::string> row{mib_text(schedules[s].sizes[i])};
                for (std::size_t m = 0; m < methods.size(); ++m) {
                    if (!methods[m].skipped.empty()) continue;
                    const auto& steps = summaries[s][m].step_ms;
                    row.push_back(i < steps.size() ? fixed(steps[i], 3) : "-");
                }
                table.add_row(row);
            }
            std::vector<std::string> total{"total"};
            for (std::size_t m = 0; m < methods.size(); ++m) {
                if (!methods[m].skipped.empty()) continue;
                total.push_back(fixed(summaries[s][m].total_ms, 2) +
                                (summaries[s][m].complete ? "" : " (stopped)"));
            }
            table.add_row(total);
            table.print();
            tables.push_back(table.to_json());
            for (std::size_t m = 0; m < methods.size(); ++m) {
                if (!methods[m].skipped.empty()) continue;
                const Summary& summary = summaries[s][m];
                json steps = json::array();
                for (std::size_t i = 0; i < summary.step_ms.size(); ++i) {
                    steps.push_back({{"bytes", schedules[s].sizes[i]}, {"ms", summary.step_ms[i]}});
                }
                runs.push_back({{"schedule", schedules[s].name},
                                {"schedule_title", schedules[s].title},
                                {"method", methods[m].key},
                                {"name", methods[m].name},
                                {"steps", steps},
                                {"total_ms", summary.total_ms},
                                {"complete", summary.complete},
                                {"stopped", summary.stopped},
                                {"contents_kept", summary.contents_kept},
                                {"details", summary.details}});
            }
        }

        // The summary: totals, the ratio to (a), and how flat the step cost is.
        auto index_of = [&](const std::string& key) {
            for (std::size_t m = 0; m < methods.size(); ++m) {
                if (methods[m].key == key) return m;
            }
            return std::size_t(0);
        };
        const std::size_t baseline = index_of("a"), growable = index_of("d");
        auto moves = [](const json& details) -> std::string {
            if (!details.contains("relocations")) return "-";
            return std::to_string(details["relocations"].get<std::uint64_t>()) + " / " +
                   std::to_string(details["in_place_extensions"].get<std::uint64_t>());
        };
        bench::ReportTable summary_table(
            "Growth to " + mib_text(max) + " on " + caps.device_name,
            {"method", doubling.title + " ms", fixed_steps.title + " ms",
             "(a) / this, " + fixed_steps.title, "step ms, first quarter", "step ms, last quarter",
             "last / first", "moves / in-place extensions", "contents kept"});
        for (std::size_t m = 0; m < methods.size(); ++m) {
            if (!methods[m].skipped.empty()) {
                summary_table.add_row({"(" + methods[m].key + ") " + methods[m].name,
                                       "skipped: " + methods[m].skipped});
                continue;
            }
            const Summary& d = summaries[0][m];
            const Summary& f = summaries[1][m];
            const double first = step_median(f.step_ms, 0.0, 0.25);
            const double last = step_median(f.step_ms, 0.75, 1.0);
            const double ratio = summaries[1][baseline].total_ms / f.total_ms;
            summary_table.add_row({"(" + methods[m].key + ") " + methods[m].name,
                                   fixed(d.total_ms, 2) + (d.complete ? "" : " (stopped)"),
                                   fixed(f.total_ms, 2) + (f.complete ? "" : " (stopped)"),
                                   fixed(ratio, 1) + "x", fixed(first, 3), fixed(last, 3),
                                   fixed(last / first, 2), moves(f.details),
                                   d.contents_kept && f.contents_kept ? "yes" : "NO"});
        }
        summary_table.print();
        tables.push_back(summary_table.to_json());

        // The largest buffer each method reaches.
        json limits = json::array();
        std::optional<double> growable_fraction, copying_fraction;
        if (options.limit_run && gpu) {
            bench::ReportTable limit_table(
                "Largest buffer reached in " + mib_text(step) + " steps (" + mib_text(memory.free) +
                    " free at the start)",
                {"method", "reached", "of free memory", "stopped because"});
            for (const Method& method : methods) {
                if (!method.skipped.empty() || method.key == "e") continue;
                const std::size_t free_now = backend->memory_info().free;
                // Managed memory stays below free device memory: oversubscribing it can stall
                // the GPU. The others run until they fail.
                const std::size_t cap = method.key == "b"
                                            ? std::size_t(double(free_now) * 0.9) / step * step
                                            : memory.total;
                MaxResult limit = run_to_the_limit(method, start, step, cap);
                const double fraction = double(limit.reached) / double(free_now);
                if (method.key == "d") growable_fraction = fraction;
                if (method.key == "a") copying_fraction = fraction;
                limit_table.add_row({"(" + method.key + ") " + method.name, mib_text(limit.reached),
                                     fixed(100.0 * fraction, 1) + "%", limit.stopped});
                limits.push_back({{"method", method.key},
                                  {"name", method.name},
                                  {"reached_bytes", limit.reached},
                                  {"free_bytes", free_now},
                                  {"fraction_of_free", fraction},
                                  {"stopped", limit.stopped}});
            }
            limit_table.print();
            tables.push_back(limit_table.to_json());
        }

        // The goals, judged only on a full GPU run.
        json goals = json::array();
        if (gpu && !options.quick) {
            bench::ReportTable goal_table("Goals", {"goal", "measured", "met"});
            auto goal = [&](const std::string& text, const std::string& measured, bool met) {
                goal_table.add_row({text, measured, met ? "yes" : "NO"});
                goals.push_back({{"goal", text}, {"measured", measured}, {"met", met}});
            };
            const Summary& a = summaries[1][baseline];
            const Summary& d = summaries[1][growable];
            const double speedup = a.total_ms / d.total_ms;
            goal(mib_text(max) + " in " + mib_text(step) + " steps >= 100x faster than (a)",
                 fixed(speedup, 0) + "x (" + fixed(d.total_ms, 2) + " ms against " +
                     fixed(a.total_ms, 1) + " ms)",
                 speedup >= 100.0 && a.complete && d.complete);
            const double flat =
                step_median(d.step_ms, 0.75, 1.0) / step_median(d.step_ms, 0.0, 0.25);
            goal("per-step cost of (d) flat as the buffer grows (last quarter / first <= 1.5)",
                 fixed(flat, 2), flat <= 1.5);
            if (growable_fraction) {
                goal("(d) grows to >= 90% of free memory", fixed(100 * *growable_fraction, 1) + "%",
                     *growable_fraction >= 0.9);
            }
            if (copying_fraction) {
                goal("(a) stops near 50% of free memory (for contrast)",
                     fixed(100 * *copying_fraction, 1) + "%", *copying_fraction < 0.6);
            }
            goal_table.print();
            tables.push_back(goal_table.to_json());
        }

        json methods_json = json::array();
        for (const Method& method : methods) {
            methods_json.push_back(
                {{"key", method.key}, {"name", method.name}, {"skipped", method.skipped}});
        }
        if (!bench::write_json_file(
                options.json,
                {{"benchmark", "growable_buffer"},
                 {"backend", caps.backend},
                 {"device", caps.device_name},
                 {"gpu", gpu},
                 {"quick", options.quick},
                 {"repeats", options.repeats},
                 {"memory", {{"total_bytes", memory.total}, {"free_bytes", memory.free}}},
                 {"start_bytes", start},
                 {"step_bytes", step},
                 {"max_bytes", max},
                 {"methods", methods_json},
                 {"runs", runs},
                 {"limits", limits},
                 {"goals", goals},
                 {"tables", tables}})) {
            return app::exit_failure;
        }
    } catch (const Error& error) {
        return app::report(program, app::exit_failure, error.what());
    } catch (const OutOfMemory& oom) {
        return app::report(program, app::exit_failure,
                           "out of memory outside a measured step: " + oom.detail);
    }
    return app::exit_success;
}
