// vtpage-bench-indirection: what keeping the shaders' indirection table current costs per page,
// beside re-uploading the whole table each frame (the baseline) and the page table's own commit
// cost, measured in the same run.
//
//   ready()          publish committed pages (the page table check included)   CPU, per page
//   evicted()        clear evicted pages (the page table's callback)            CPU, per page
//   delta upload     record_upload: changed entries into staging, then copy     CPU and GPU,
//                    regions (one per run) or, for many runs, one compute      per frame and
//                    scatter (the default); copies alone are measured beside   per entry
//   full upload      the whole table (8 bytes per virtual page) copied each     CPU and GPU,
//                    frame                                                      per frame
#include <algorithm>
#include <cstring>
#include <random>

#include "support/bench_options.hpp"
#include "support/report_table.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/core/page_table.hpp"
#include "vtpage/interop/vulkan_buffer.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_handle.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace {

using namespace vtpage;
using bench::fixed;

constexpr const char* program = "vtpage-bench-indirection";

struct Options : bench::BenchOptions {
    std::uint32_t texture_log2 = 20;                    // the table covers one texture of this size
    std::size_t physical_pages = 512;                   // the page table's budget: 1 GiB
    std::vector<std::size_t> updates = {16, 128, 512};  // pages committed per frame
    int frames = 40;
    bool validation = false;
};

// GPU time of recorded commands, by timestamps.
class GpuTimer {
public:
    explicit GpuTimer(VulkanContext& context) : context_(context) {
        VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = 2;
        VkQueryPool pool = VK_NULL_HANDLE;
        vk_check(vkCreateQueryPool(context.device(), &info, nullptr, &pool), "GpuTimer",
                 "vkCreateQueryPool");
        pool_ = UniqueVkQueryPool(context.device(), pool);
    }
    // Runs `record` between two timestamps, waits, returns the microseconds between them.
    double run(const std::function<void(VkCommandBuffer)>& record) {
        context_.run_commands([&](VkCommandBuffer commands) {
            vkCmdResetQueryPool(commands, pool_.get(), 0, 2);
            vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_NONE, pool_.get(), 0);
            record(commands);
            vkCmdWriteTimestamp2(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_.get(), 1);
        });
        std::uint64_t ticks[2] = {};
        vk_check(vkGetQueryPoolResults(context_.device(), pool_.get(), 0, 2, sizeof(ticks), ticks,
                                       8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                 "GpuTimer", "vkGetQueryPoolResults");
        return double(ticks[1] - ticks[0]) * context_.properties().limits.timestampPeriod * 1e-3;
    }

private:
    VulkanContext& context_;
    UniqueVkQueryPool pool_;
};

struct Result {
    std::size_t updates = 0;    // pages committed per frame
    double ready_us = 0;        // per page
    double evicted_us = 0;      // per page
    double commit_us = 0;       // the page table's commit, per page (for scale)
    double upload_entries = 0;  // entries per frame (evictions and readies together)
    double upload_cpu_us = 0;   // record_upload, per frame
    double upload_gpu_us = 0;   // the copies or the scatter, per frame
    double scattered = 0;       // fraction of uploads that were scatters
};

// max_copy_regions: the table's setting (its default scatters many runs; SIZE_MAX: copies only).
Result measure(Backend& backend, VulkanContext& context, const Options& options,
               std::size_t updates, std::size_t max_copy_regions) {
    const vt::TextureLayout layout(options.texture_log2);
    const std::uint64_t page_count = layout.page_count;
    VulkanPageImporter importer(context, backend);
    VulkanIndirectionTable indirection(
        context, importer, {.page_count = page_count, .max_copy_regions = max_copy_regions});
    PageTableSettings settings;
    settings.region_size = page_count * backend.granularity().minimum;
    settings.budget_bytes = options.physical_pages * backend.granularity().minimum;
    settings.map_into_region = false;
    settings.pool.map_windows = true;
    settings.pool.window_pages = options.physical_pages + 16;
    settings.log = Log(silent_log());
    importer.attach(settings.pool);
    double frame_evicted_seconds = 0;  // this frame's
    std::size_t frame_evicted_pages = 0;
    settings.on_evicted = [&](std::span<const PageMapping> pages) {
        bench::Stopwatch watch;
        indirection.evicted(pages);
        frame_evicted_seconds += watch.seconds();
        frame_evicted_pages += pages.size();
    };
    PageTable table(backend, settings);
    indirection.check_against(&table);
    GpuTimer timer(context);

    std::mt19937_64 random(42);
    std::uniform_int_distribution<std::uint64_t> any_page(0, page_count - 1);
    // Half the budget at most, so that each frame evicts pages committed frames ago.
    const std::size_t per_frame = std::min(updates, options.physical_pages / 2);
    double ready_seconds = 0, commit_seconds = 0, evicted_seconds = 0, upload_cpu = 0,
           upload_gpu = 0;
    std::size_t readied = 0, evicted_pages = 0, uploaded = 0, scattered = 0;
    // The first frames fill the budget (creating and importing pages): not measured.
    const int warm_up = int(options.physical_pages / per_frame) + 2;
    for (int frame = 0; frame < warm_up + options.frames; ++frame) {
        const bool measured = frame >= warm_up;
        std::vector<PageIndex> pages;
        while (pages.size() < per_frame) {
            const PageIndex page = any_page(random);
            if (!table.is_resident(page) &&
                std::find(pages.begin(), pages.end(), page) == pages.end()) {
                pages.push_back(page);
            }
        }
        frame_evicted_seconds = 0;
        frame_evicted_pages = 0;
        bench::Stopwatch commit_watch;
        auto mappings = table.commit(pages);
        const double commit = commit_watch.seconds() - frame_evicted_seconds;
        bench::Stopwatch ready_watch;
        indirection.ready(mappings);
        const double ready = ready_watch.seconds();
        double cpu = 0;
        IndirectionUpload upload;
        const double gpu = timer.run([&](VkCommandBuffer commands) {
            auto lock = indirection.lock_submission();
            bench::Stopwatch watch;
            upload = indirection.record_upload(commands, 0);
            cpu = watch.seconds();
        });
        if (!measured) continue;
        commit_seconds += commit;
        evicted_seconds += frame_evicted_seconds;
        evicted_pages += frame_evicted_pages;
        ready_seconds += ready;
        readied += mappings.size();
        upload_cpu += cpu;
        upload_gpu += gpu;
        uploaded += upload.entries;
        scattered += upload.scattered;
    }
    Result result;
    result.updates = per_frame;
    result.ready_us = ready_seconds * 1e6 / double(readied);
    result.commit_us = commit_seconds * 1e6 / double(readied);
    result.evicted_us = evicted_pages ? evicted_seconds * 1e6 / double(evicted_pages) : 0;
    result.upload_entries = double(uploaded) / options.frames;
    result.upload_cpu_us = upload_cpu * 1e6 / options.frames;
    result.upload_gpu_us = upload_gpu / options.frames;
    result.scattered = double(scattered) / options.frames;
    table.shutdown();
    return result;
}

// The baseline: the whole table written to staging and copied, each frame.
void measure_full_upload(VulkanContext& context, const Options& options, double& cpu_us,
                         double& gpu_us) {
    const std::uint64_t bytes = vt::TextureLayout(options.texture_log2).page_count * 8;
    std::vector<std::uint64_t> shadow(bytes / 8, 0x1234);
    VulkanBuffer staging(context, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, BufferMemory::upload);
    VulkanBuffer table(context, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                       BufferMemory::device_local);
    GpuTimer timer(context);
    double cpu = 0, gpu = 0;
    for (int frame = 0; frame < options.frames; ++frame) {
        bench::Stopwatch watch;
        std::memcpy(staging.mapped(), shadow.data(), bytes);
        cpu += watch.seconds();
        gpu += timer.run([&](VkCommandBuffer commands) {
            VkBufferCopy region{0, 0, bytes};
            vkCmdCopyBuffer(commands, staging.get(), table.get(), 1, &region);
        });
    }
    cpu_us = cpu * 1e6 / options.frames;
    gpu_us = gpu / options.frames;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "vtpage indirection table benchmark: per-page cost of keeping the shaders' "
        "table current, beside re-uploading all of it",
        program};
    Options options;
    bench::add_bench_options(app, options);
    app.add_option("--texture-log2", options.texture_log2,
                   "The table covers one texture of 2^N x 2^N texels")
        ->check(app::count_in(8, 20));
    app.add_option("--physical-pages", options.physical_pages, "The page table's budget in pages")
        ->check(app::count_in(4, 1 << 16));
    app.add_option("--updates", options.updates, "Pages committed per frame (several allowed)")
        ->check(app::count_in(1, 1 << 16));
    app.add_option("--frames", options.frames, "Frames measured per row")
        ->check(app::count_in(1, 100000));
    app.add_flag("--validation", options.validation, "Khronos validation on (slower)");
    if (auto status = app::parse_command_line(app, argc, argv)) return *status;
    if (options.quick) {
        options.texture_log2 = 14;
        options.physical_pages = 16;
        options.updates = {4, 16};
        options.frames = 3;
    }
    try {
        auto backend = bench::make_bench_backend(options.backend, Log(silent_log()));
        VulkanContextSettings context_settings = VulkanContextSettings::for_backend(*backend);
        context_settings.validation =
            options.validation ? ValidationMode::required : ValidationMode::off;
        VulkanContext context(context_settings);
        const std::uint64_t page_count = vt::TextureLayout(options.texture_log2).page_count;
        std::printf(
            "indirection table benchmark on %s pages, Vulkan device %s: %llu virtual "
            "pages (a 2^%u texture, %.1f MiB of table), %zu physical, %d frames per row\n",
            backend->name().data(), context.device_name().c_str(),
            static_cast<unsigned long long>(page_count), options.texture_log2,
            double(page_count * 8) / double(1 << 20), options.physical_pages, options.frames);
        double full_cpu = 0, full_gpu = 0;
        measure_full_upload(context, options, full_cpu, full_gpu);
        const std::size_t default_regions = VulkanIndirectionTableSettings{}.max_copy_regions;
        std::vector<Result> results, copies;
        app::ProgressBar progress({.label = "measuring"});
        for (std::size_t i = 0; i < options.updates.size(); ++i) {
            progress.update(double(i) / double(options.updates.size()),
                            detail::concat("row ", i + 1, " of ", options.updates.size()));
            results.push_back(
                measure(*backend, context, options, options.updates[i], default_regions));
            copies.push_back(measure(*backend, context, options, options.updates[i], SIZE_MAX));
        }
        progress.clear();

        bench::ReportTable per_page("Indirection table updates on " + std::string(backend->name()) +
                                        " pages (" + context.device_name() + "), CPU per page",
                                    {"pages per frame", "ready() us/page", "evicted() us/page",
                                     "page table commit us/page", "ready + evicted vs commit"});
        bench::ReportTable per_frame(
            "Uploads per frame: changed entries vs the whole table (" +
                fixed(double(page_count * 8) / double(1 << 20), 1) + " MiB)",
            {"pages per frame", "entries uploaded", "delta CPU us", "delta GPU us",
             "delta us/entry", "scattered", "copies only GPU us", "full CPU us", "full GPU us",
             "delta vs full"});
        nlohmann::json rows = nlohmann::json::array();
        for (std::size_t i = 0; i < results.size(); ++i) {
            const Result& r = results[i];
            const Result& copy = copies[i];
            const double events = r.ready_us + r.evicted_us;
            per_page.add_row({std::to_string(r.updates), fixed(r.ready_us, 3),
                              fixed(r.evicted_us, 3), fixed(r.commit_us, 2),
                              fixed(100.0 * events / r.commit_us, 1) + " %"});
            const double delta = r.upload_cpu_us + r.upload_gpu_us;
            const double full = full_cpu + full_gpu;
            per_frame.add_row(
                {std::to_string(r.updates), fixed(r.upload_entries, 0), fixed(r.upload_cpu_us, 1),
                 fixed(r.upload_gpu_us, 1), fixed(delta / std::max(r.upload_entries, 1.0), 3),
                 fixed(100.0 * r.scattered, 0) + " %", fixed(copy.upload_gpu_us, 1),
                 fixed(full_cpu, 1), fixed(full_gpu, 1), fixed(delta / full, 4) + "x"});
            rows.push_back({{"pages_per_frame", r.updates},
                            {"ready_us_per_page", r.ready_us},
                            {"evicted_us_per_page", r.evicted_us},
                            {"commit_us_per_page", r.commit_us},
                            {"entries_per_frame", r.upload_entries},
                            {"delta_upload_cpu_us", r.upload_cpu_us},
                            {"delta_upload_gpu_us", r.upload_gpu_us},
                            {"scattered_fraction", r.scattered},
                            {"copies_only_upload_gpu_us", copy.upload_gpu_us},
                            {"full_upload_cpu_us", full_cpu},
                            {"full_upload_gpu_us", full_gpu}});
        }
        per_page.print();
        per_frame.print();
        if (!bench::write_json_file(options.json, {{"backend", backend->name()},
                                                   {"device", context.device_name()},
                                                   {"virtual_pages", page_count},
                                                   {"physical_pages", options.physical_pages},
                                                   {"frames", options.frames},
                                                   {"rows", rows}})) {
            return app::exit_failure;
        }
    } catch (const Error& error) {
        return app::report(program, app::exit_failure, error.what());
    }
    return app::exit_success;
}
