// vtpage-stress: the eviction stress tool. See docs/stress.md.
#include <cstdio>
#include <fstream>

#include "page_verifier.hpp"
#include "stress_options.hpp"
#include "stress_report.hpp"
#include "stress_run.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/config.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::stress;

constexpr const char* program = "vtpage-stress";

// The checks that need the backend's page size. An empty string when all is well.
std::string check_against_backend(const StressOptions& o, std::size_t page_size) {
    const std::uint64_t budget_pages = (o.budget_mib << 20) / page_size;
    const std::uint64_t region_pages = (o.va_gib << 30) / page_size;
    if (o.stamp_stride % sizeof(PageStamp) != 0 || page_size % o.stamp_stride != 0) {
        return detail::concat("--stamp-stride ", o.stamp_stride,
                              " must be a multiple of 32 that divides the page size (", page_size,
                              ")");
    }
    if (budget_pages < std::uint64_t(o.threads) * o.batch) {
        return detail::concat("--budget-mib ", o.budget_mib, " holds ", budget_pages, " pages of ",
                              page_size >> 20,
                              " MiB: fewer than --threads x "
                              "--batch = ",
                              o.threads * o.batch, " pages, which the workers pin at once");
    }
    if (region_pages <= budget_pages) {
        return detail::concat("--va-gib ", o.va_gib,
                              " is not larger than the budget: "
                              "nothing would ever be evicted");
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    ParsedOptions parsed = parse_options(argc, argv);
    if (!parsed.options) return parsed.exit_code;
    const StressOptions& options = *parsed.options;

    std::unique_ptr<Backend> backend;
    try {
        BackendSettings settings;
        settings.name = options.backend;
        backend = make_backend(settings);
    } catch (const Error& error) {
        return app::report(program, app::exit_failure,
                           "no " + options.backend + " backend: " + error.what());
    }
    const std::size_t page_size = backend->granularity().minimum;
    if (std::string problem = check_against_backend(options, page_size); !problem.empty()) {
        return app::report(program, app::exit_usage, problem);
    }

    const StampLayout layout{page_size, options.stamp_stride};
    std::vector<std::unique_ptr<PageVerifier>> verifiers;
    try {
        for (int t = 0; t < options.threads; ++t) {
            if (backend->capabilities().gpu) {
#if VTPAGE_HAS_CUDA
                verifiers.push_back(
                    make_gpu_verifier(layout, backend->capabilities().device, options.batch));
#else
                throw Error(Errc::not_supported, "vtpage-stress", "built without CUDA");
#endif
            } else {
                verifiers.push_back(make_host_verifier(layout));
            }
        }
    } catch (const Error& error) {
        return app::report(program, app::exit_failure,
                           std::string("cannot verify pages on this device: ") + error.what());
    }

    RunHeader header;
    header.backend = std::string(backend->name());
    header.device = backend->capabilities().device_name;
    header.page_size = page_size;
    header.region_pages = (options.va_gib << 30) / page_size;
    header.budget_pages = (options.budget_mib << 20) / page_size;
    header.export_pages = options.export_pages.value_or(backend->capabilities().fd_handles);

    StressRun run(*backend, options, verifiers);
    std::vector<PatternResult> results;
    for (std::size_t i = 0; i < options.patterns.size(); ++i) {
        const PatternKind kind = options.patterns[i];
        const std::string label =
            detail::concat("[", i + 1, "/", options.patterns.size(), "] ", to_string(kind));
        try {
            results.push_back(run.run(kind, label));
        } catch (const Error& error) {
            // Setting the run up failed (the region could not be reserved, say).
            return app::report(program, app::exit_failure,
                               std::string(to_string(kind)) + ": " + error.what());
        }
    }
    verifiers.clear();
    print_report(stdout, header, options, results);
    if (!options.json.empty()) {
        std::ofstream file(options.json);
        file << report_json(header, options, results).dump(2) << "\n";
        if (!file) return app::report(program, app::exit_failure, "cannot write " + options.json);
    }
    return totals_of(results).passed ? app::exit_success : app::exit_failure;
}
