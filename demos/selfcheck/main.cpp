// vtpage-selfcheck: which backends this machine has, what they can do, and a short round trip
// through each (reserve, commit, write, read back, export and import a page).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/config.hpp"

namespace {

using namespace vtpage;

const char* yes_no(bool value) { return value ? "yes" : "no"; }

// Returns an empty string when the round trip worked, else what went wrong.
std::string round_trip(Backend& backend) {
    const std::size_t page = backend.granularity().minimum;
    const std::size_t pages = 8;
    const std::size_t reserve_size = 1_TiB;
    const LiveResources before = backend.live_resources();
    DeviceAddress base = backend.reserve(reserve_size);
    std::vector<PhysicalHandle> handles;
    // Spread the pages over the terabyte, as a virtual texture would.
    auto address_of = [&](std::size_t i) { return base + i * (reserve_size / pages); };
    for (std::size_t i = 0; i < pages; ++i) {
        handles.push_back(backend.create(page));
        backend.map(address_of(i), page, handles.back());
        backend.set_access(address_of(i), page, Access::read_write);
    }
    std::vector<std::uint32_t> pattern(page / 4), back(page / 4);
    std::string problem;
    for (std::size_t i = 0; i < pages && problem.empty(); ++i) {
        std::iota(pattern.begin(), pattern.end(), static_cast<std::uint32_t>(i * 1000003));
        backend.write(address_of(i), pattern.data(), page);
        backend.read(back.data(), address_of(i), page);
        if (back != pattern) problem = "page " + std::to_string(i) + " read back wrong";
    }
    if (problem.empty() && backend.capabilities().fd_handles) {
        UniqueFd fd = backend.export_fd(handles.back());
        PhysicalHandle imported = backend.import_fd(fd.get(), page);
        DeviceAddress second = backend.reserve(page);
        backend.map(second, page, imported);
        backend.set_access(second, page, Access::read);
        backend.read(back.data(), second, page);
        if (back != pattern) problem = "the imported page differs";
        backend.unmap(second, page);
        backend.release(imported);
        backend.free_reservation(second, page);
    }
    for (std::size_t i = 0; i < pages; ++i) {
        backend.unmap(address_of(i), page);
        backend.release(handles[i]);
    }
    backend.free_reservation(base, reserve_size);
    if (problem.empty() && !(backend.live_resources() == before)) problem = "resources leaked";
    return problem;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"vtpage self-check: backends, devices, capabilities and a round trip"};
    std::string which = "all";
    bool verbose = false;
    app.add_option("--backend", which, "Backend to check")
        ->check(CLI::IsMember({"all", "auto", "cuda", "host"}));
    app.add_flag("-v,--verbose", verbose, "Log the backends' own messages");
    CLI11_PARSE(app, argc, argv);

    std::printf("vtpage %s (CUDA backend %s, Vulkan interop %s)\n", VTPAGE_VERSION,
                VTPAGE_HAS_CUDA ? "built" : "not built", VTPAGE_HAS_VULKAN ? "built" : "not built");
    std::vector<std::string> names;
    if (which == "all") {
        names = {"cuda", "host"};
    } else {
        names = {which};
    }
    int failures = 0;
    int working = 0;
    for (const std::string& name : names) {
        BackendSettings settings;
        settings.name = name;
        settings.log = Log(verbose ? stderr_log(LogLevel::debug) : stderr_log(LogLevel::warning));
        std::unique_ptr<Backend> backend;
        try {
            backend = make_backend(settings);
        } catch (const Error& error) {
            std::printf("\n[%s] unavailable: %s\n", name.c_str(), error.what());
            if (name != "cuda") ++failures;
            continue;
        }
        const Capabilities& caps = backend->capabilities();
        const Granularity granularity = backend->granularity();
        const MemoryInfo memory = backend->memory_info();
        std::printf("\n[%s] %s (device %d of %d)\n", name.c_str(), caps.device_name.c_str(),
                    caps.device, caps.device_count);
        std::printf("  driver            %s\n", caps.driver_version.c_str());
        if (caps.gpu) std::printf("  compute cap.      %d.%d\n", caps.compute_capability / 10,
                                  caps.compute_capability % 10);
        std::printf("  memory            %.1f GiB total, %.1f GiB free\n",
                    double(memory.total) / double(1_GiB), double(memory.free) / double(1_GiB));
        std::printf("  granularity       %zu KiB minimum, %zu KiB recommended\n",
                    granularity.minimum / 1024, granularity.recommended / 1024);
        std::printf("  virtual memory    %s\n", yes_no(caps.virtual_memory));
        std::printf("  fd export/import  %s\n", yes_no(caps.fd_handles));
        std::printf("  compression       %s\n", yes_no(caps.compression));
        std::printf("  read-only access  %s\n", yes_no(caps.read_only_access));
        auto start = std::chrono::steady_clock::now();
        std::string problem;
        try {
            problem = round_trip(*backend);
        } catch (const Error& error) {
            problem = error.what();
        }
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              start).count();
        if (problem.empty()) {
            ++working;
            std::printf("  round trip        ok (1 TiB reserved, 8 pages written, read back, "
                        "exported and imported; %.1f ms)\n", ms);
        } else {
            ++failures;
            std::printf("  round trip        FAILED: %s\n", problem.c_str());
        }
    }
    std::printf("\n%d backend(s) working, %d failure(s)\n", working, failures);
    return failures == 0 && working > 0 ? 0 : 1;
}
