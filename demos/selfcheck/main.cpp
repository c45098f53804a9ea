// vtpage-selfcheck: which backends this machine has, what they can do, and a short round trip
// through each (reserve, commit, write, read back, export and import a page).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "vtpage/app/command_line.hpp"
#include "vtpage/app/units.hpp"
#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/backend/stream_ordered_pool.hpp"
#include "vtpage/config.hpp"
#include "vtpage/core/page_table.hpp"
#if VTPAGE_HAS_CUDA
#include "vtpage/backend/cuda_backend.hpp"
#endif

namespace {

using namespace vtpage;
using app::mib;

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

// A compressible page: whether the driver granted compression, read back from the page and,
// where pages can be exported, from a copy imported through its fd.
std::string compressible_page(Backend& backend) {
    const std::size_t page = backend.granularity().minimum;
    const bool exportable = backend.capabilities().fd_handles;
    PhysicalHandle handle = backend.create(page, PageOptions{-1, exportable, true});
    const bool granted = backend.is_compressed(handle);
    std::string text = granted ? "granted (read back)" : "not granted";
    if (granted && exportable) {
        try {
            UniqueFd fd = backend.export_fd(handle);
            PhysicalHandle imported = backend.import_fd(fd.get(), page);
            text += backend.is_compressed(imported) ? ", also through an fd export and import"
                                                    : ", but not through an fd export and import";
            backend.release(imported);
        } catch (const Error& error) {
            text += std::string(", fd round trip failed: ") + error.what();
        }
    }
    backend.release(handle);
    return text;
}

// The page pool's and a stream-ordered pool's statistics, in the same words: a page table
// commits 8 pages while 4 staging buffers come and go.
void print_pools(Backend& backend) {
    PageTableSettings settings;
    settings.region_size = 64_GiB;
    settings.budget_bytes = 8 * backend.granularity().minimum;
    PageTable table(backend, settings);
    table.commit(std::vector<PageIndex>{0, 1, 2, 3, 4, 5, 6, 7});
    table.evict(std::vector<PageIndex>{6, 7});
    const PagePoolStatistics pages = table.statistics().pool;
    std::printf("  page pool         %s\n",
                app::pool_usage(pages.reserved_bytes, pages.reserved_bytes_high, pages.used_bytes,
                                pages.used_bytes_high)
                    .c_str());
    for (StreamPoolLocation location : {StreamPoolLocation::device, StreamPoolLocation::host}) {
        const char* name = location == StreamPoolLocation::device ? "scratch" : "staging";
        try {
            StreamPoolSettings pool_settings;
            pool_settings.location = location;
            pool_settings.release_threshold = 16_MiB;
            pool_settings.log = Log(silent_log());
            auto pool = make_stream_ordered_pool(backend, pool_settings);
            std::vector<DeviceAddress> buffers;
            buffers.reserve(4);
            for (int i = 0; i < 4; ++i) buffers.push_back(pool->allocate(8_MiB));
            pool->free(buffers.back());
            buffers.pop_back();
            pool->synchronize();
            const StreamPoolStatistics s = pool->statistics();
            std::printf("  %s pool      %s, threshold %s, %s memory\n", name,
                        app::pool_usage(s.reserved_bytes, s.reserved_bytes_high, s.used_bytes,
                                        s.used_bytes_high)
                            .c_str(),
                        mib(s.release_threshold).c_str(), std::string(to_string(location)).c_str());
            for (DeviceAddress buffer : buffers) pool->free(buffer);
            pool->synchronize();
        } catch (const Error& error) {
            std::printf("  %s pool      unavailable: %s\n", name, error.what());
        }
    }
}

// Devices and which pairs reach each other's memory (CUDA only).
void print_devices([[maybe_unused]] Backend& backend) {
#if VTPAGE_HAS_CUDA
    auto* cuda = dynamic_cast<CudaBackend*>(&backend);
    if (!cuda || backend.capabilities().device_count < 2) return;
    const int count = backend.capabilities().device_count;
    std::string pairs;
    for (int a = 0; a < count; ++a) {
        for (int b = 0; b < count; ++b) {
            if (a == b) continue;
            pairs +=
                detail::concat(" ", a, "->", b, ":", cuda->can_access_peer(a, b) ? "yes" : "no");
        }
    }
    std::printf("  peer access      %s\n", pairs.c_str());
#endif
}

}  // namespace

static int run(int argc, char** argv) {
    CLI::App app{
        "vtpage self-check: backends, devices, capabilities and a round trip. Exit "
        "status: 0 when every backend checked works, 1 when one failed (or none "
        "works), 2 on bad flags.",
        "vtpage-selfcheck"};
    std::string which = "all";
    bool verbose = false;
    app.add_option("--backend", which, "Backend to check")
        ->check(CLI::IsMember({"all", "auto", "cuda", "host"}));
    app.add_flag("-v,--verbose", verbose, "Log the backends' own messages");
    if (auto status = app::parse_command_line(app, argc, argv)) return *status;

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
        if (caps.gpu)
            std::printf("  compute cap.      %d.%d\n", caps.compute_capability / 10,
                        caps.compute_capability % 10);
        std::printf("  memory            %.1f GiB total, %.1f GiB free\n",
                    double(memory.total) / double(1_GiB), double(memory.free) / double(1_GiB));
        std::printf("  granularity       %zu KiB minimum, %zu KiB recommended\n",
                    granularity.minimum / 1024, granularity.recommended / 1024);
        std::printf("  virtual memory    %s\n", yes_no(caps.virtual_memory));
        std::printf("  fd export/import  %s\n", yes_no(caps.fd_handles));
        std::printf("  compression       %s\n", yes_no(caps.compression));
        std::printf("  read-only access  %s\n", yes_no(caps.read_only_access));
        print_devices(*backend);
        try {
            std::printf("  compressible page %s\n", compressible_page(*backend).c_str());
            print_pools(*backend);
        } catch (const Error& error) {
            ++failures;
            std::printf("  pools             FAILED: %s\n", error.what());
        }
        auto start = std::chrono::steady_clock::now();
        std::string problem;
        try {
            problem = round_trip(*backend);
        } catch (const Error& error) {
            problem = error.what();
        }
        double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        if (problem.empty()) {
            ++working;
            std::printf(
                "  round trip        ok (1 TiB reserved, 8 pages written, read back, "
                "exported and imported; %.1f ms)\n",
                ms);
        } else {
            ++failures;
            std::printf("  round trip        FAILED: %s\n", problem.c_str());
        }
    }
    std::printf("\n%d backend(s) working, %d failure(s)\n", working, failures);
    return failures == 0 && working > 0 ? app::exit_success : app::exit_failure;
}

// What the program's own handling lets through (CLI11's errors in setting up the flags, say)
// ends it with a message and status 1 rather than std::terminate.
int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        return app::report("vtpage-selfcheck", app::exit_failure, error.what());
    }
}
