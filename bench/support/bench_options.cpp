#include "bench_options.hpp"

#include "vtpage/app/command_line.hpp"
#include "vtpage/app/progress_bar.hpp"

namespace vtpage::bench {

void add_bench_options(CLI::App& app, BenchOptions& options) {
    app::add_backend_option(app, options.backend);
    app.add_option("--json", options.json, "Write the results as JSON to this file")
        ->check(app::writable_file());
    app.add_flag("--quick", options.quick, "A short smoke run");
}

std::unique_ptr<Backend> make_bench_backend(const std::string& name, Log log) {
    BackendSettings settings;
    settings.name = name;
    settings.log = std::move(log);
    return make_backend(settings);
}

void run_repeats(int repeats, const std::function<void(int repeat)>& measure) {
    app::ProgressBar progress({.label = "measuring"});
    for (int r = 0; r < repeats; ++r) {
        progress.update(double(r) / repeats, detail::concat("repeat ", r + 1, " of ", repeats));
        measure(r);
    }
    progress.clear();
}

}  // namespace vtpage::bench
