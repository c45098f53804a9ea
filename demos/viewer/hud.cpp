#include "hud.hpp"

#include <imgui.h>
#include <imgui_impl_vulkan.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "viewer_options.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_error.hpp"
#include "vtpage/interop/vulkan_handle.hpp"

namespace vtpage::viewer {

namespace {

// Dear ImGui's Vulkan backend reports results through a plain function.
void check_imgui_result(VkResult result) {
    if (result < 0) vk_check(result, "Hud", "Dear ImGui Vulkan backend");
}

using UniqueVkRenderPass = VulkanObject<VkRenderPass, &vkDestroyRenderPass>;
using UniqueVkFramebuffer = VulkanObject<VkFramebuffer, &vkDestroyFramebuffer>;
using UniqueVkDescriptorPool = VulkanObject<VkDescriptorPool, &vkDestroyDescriptorPool>;

constexpr double mib = 1024.0 * 1024.0;

// What a user sees of streaming: the last frame's pixels at their wanted level, and the last
// camera cut's time to full detail.
void build_quality(const FrameStats& stats) {
    const QualityFigures quality = stats.quality();
    if (!quality.measured) {
        ImGui::TextDisabled("detail: not measured (forward texturing or an overlay)");
        return;
    }
    ImGui::Text("at wanted level %.1f %%  (p50 %.1f, min %.1f)  missing %.2f levels",
                quality.last.share_at_wanted_level() * 100.0, quality.share_p50 * 100.0,
                quality.share_min * 100.0, quality.last.mean_levels_missing());
    if (stats.cuts().empty()) return;
    const CutRecovery& cut = stats.cuts().back();
    const FullDetailFigures all = full_detail_figures(stats.cuts());
    if (cut.outcome == CutOutcome::reached) {
        ImGui::Text("full detail after the cut in %llu frames (%.0f ms); p50 %.0f, max %.0f",
                    static_cast<unsigned long long>(cut.frames), cut.ms, all.frames.p50,
                    all.frames.max);
    } else {
        ImGui::Text("full detail after the cut: %s (best %.1f %%, %zu pages asked)",
                    std::string(to_string(cut.outcome)).c_str(), cut.best_share * 100.0,
                    cut.working_set_pages);
    }
}

}  // namespace

struct Hud::State {
    VulkanContext& context;
    UniqueVkRenderPass render_pass;
    UniqueVkDescriptorPool descriptors;
    UniqueVkFramebuffer framebuffer;
    VkImageView framebuffer_view = VK_NULL_HANDLE;
    VkExtent2D framebuffer_extent{};
    ImGuiContext* imgui = nullptr;
    bool backend_ready = false;

    explicit State(VulkanContext& c) : context(c) {}
};

Hud::Hud(VulkanContext& context, VkFormat colour_format, std::uint32_t frames_in_flight)
    : state_(std::make_unique<State>(context)) {
    State& s = *state_;
    VkDevice device = context.device();

    // Draws over what the renderer left in the image, and leaves it as it found it.
    VkAttachmentDescription attachment{};
    attachment.format = colour_format;
    attachment.samples = VK_SAMPLE_COUNT_1_BIT;
    attachment.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
    attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    attachment.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    attachment.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    attachment.initialLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    attachment.finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    VkAttachmentReference reference{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &reference;
    // After the renderer's colour pass wrote the image; what comes after orders itself.
    VkSubpassDependency dependencies[2]{};
    dependencies[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    dependencies[0].dstSubpass = 0;
    dependencies[0].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dependencies[0].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    dependencies[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dependencies[0].dstAccessMask =
        VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    dependencies[1].srcSubpass = 0;
    dependencies[1].dstSubpass = VK_SUBPASS_EXTERNAL;
    dependencies[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dependencies[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    dependencies[1].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    dependencies[1].dstAccessMask =
        VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    VkRenderPassCreateInfo pass_info{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    pass_info.attachmentCount = 1;
    pass_info.pAttachments = &attachment;
    pass_info.subpassCount = 1;
    pass_info.pSubpasses = &subpass;
    pass_info.dependencyCount = 2;
    pass_info.pDependencies = dependencies;
    VkRenderPass pass = VK_NULL_HANDLE;
    vk_check(vkCreateRenderPass(device, &pass_info, nullptr, &pass), "Hud", "vkCreateRenderPass");
    s.render_pass = UniqueVkRenderPass(device, pass);

    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    pool_info.maxSets = 4;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    vk_check(vkCreateDescriptorPool(device, &pool_info, nullptr, &pool), "Hud",
             "vkCreateDescriptorPool");
    s.descriptors = UniqueVkDescriptorPool(device, pool);

    IMGUI_CHECKVERSION();
    s.imgui = ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini in the working folder
    io.LogFilename = nullptr;
    ImGui::StyleColorsDark();
    ImGui::GetStyle().Alpha = 0.92f;

    ImGui_ImplVulkan_InitInfo info{};
    info.Instance = context.instance();
    info.PhysicalDevice = context.physical_device();
    info.Device = device;
    info.QueueFamily = context.queue_family();
    info.Queue = context.queue();
    info.DescriptorPool = pool;
    info.Subpass = 0;
    info.MinImageCount = std::max<std::uint32_t>(frames_in_flight + 1, 2);
    info.ImageCount = info.MinImageCount;
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    info.CheckVkResultFn = &check_imgui_result;
    ImGui_ImplVulkan_Init(&info, pass);
    s.backend_ready = true;
    context.run_commands(
        [](VkCommandBuffer commands) { ImGui_ImplVulkan_CreateFontsTexture(commands); });
    ImGui_ImplVulkan_DestroyFontUploadObjects();
}

Hud::~Hud() {
    State& s = *state_;
    s.context.wait_idle();  // frames in flight may still draw with the HUD's buffers
    if (s.backend_ready) ImGui_ImplVulkan_Shutdown();
    if (s.imgui) ImGui::DestroyContext(s.imgui);
}

void Hud::begin_frame(double seconds_since_last, std::uint32_t width, std::uint32_t height,
                      bool window_platform) {
    ImGuiIO& io = ImGui::GetIO();
    if (!window_platform) {
        io.DisplaySize = ImVec2(float(width), float(height));
        io.DisplayFramebufferScale = ImVec2(1, 1);
    }
    io.DeltaTime = float(std::clamp(seconds_since_last, 1e-4, 1.0));
    ImGui_ImplVulkan_NewFrame();
    ImGui::NewFrame();
}

void Hud::build(const HudData& d) {
    ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.75f);
    ImGui::Begin("vtpage viewer", nullptr,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
    ImGui::Text("%s on %s", d.backend.c_str(), d.device.c_str());
    ImGui::Text("%s", d.texture.c_str());
    ImGui::Separator();

    const FrameStats& stats = *d.stats;
    const Percentiles p = stats.frame_ms();
    ImGui::Text("frame %.2f ms  (p50 %.2f, p99 %.2f)  GPU %.2f ms", stats.last_frame_ms(), p.p50,
                p.p99, d.gpu_ms);
    std::vector<float> history(stats.history().begin(), stats.history().end());
    float top = 1;
    for (float value : history) top = std::max(top, value);
    char label[64];
    std::snprintf(label, sizeof label, "max %.1f ms", top);
    ImGui::PlotLines("##frame", history.data(), int(history.size()), 0, label, 0.0f, top * 1.1f,
                     ImVec2(360, 60));

    build_quality(stats);

    const Rates rates = stats.rates();
    const vt::StreamerStatistics& streamer = d.counters.streamer;
    const PageTableStatistics& table = streamer.table;
    const float fill = d.budget_pages ? float(table.resident_pages) / float(d.budget_pages) : 0.0f;
    std::snprintf(label, sizeof label, "%zu / %zu pages", table.resident_pages, d.budget_pages);
    ImGui::Text("resident");
    ImGui::SameLine();
    ImGui::ProgressBar(fill, ImVec2(260, 0), label);
    ImGui::Text("commits %.0f/s  evictions %.0f/s", rates.commits, rates.evictions);
    ImGui::Text("held back for frames in flight %zu pages (peak %zu)", table.deferred_pages,
                table.deferred_peak);
    ImGui::Text("streamed %.0f pages/s  %.0f MiB/s", rates.pages_streamed,
                rates.bytes_streamed / mib);
    ImGui::Text("streamed in all %llu pages, %.1f GiB",
                static_cast<unsigned long long>(streamer.pages_filled),
                double(streamer.bytes_filled) / (mib * 1024.0));
    ImGui::Text("queue %zu pending, %zu in flight, %llu dropped", streamer.pending,
                streamer.in_flight, static_cast<unsigned long long>(streamer.dropped_requests));
    if (const auto& reads = streamer.file_reads; reads.loaded + reads.failed > 0) {
        ImGui::Text("decode threads %zu of %zu%s, %zu pages waiting for one",
                    reads.active_decode_threads, reads.decode_threads,
                    d.counters.decode_threads_governed ? " (governed)" : "", reads.decode_queue);
    }
    if (const vt::BudgetDemand& demand = d.counters.budget.newest; demand.over_budget()) {
        ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.2f, 1.0f),
                           "over budget by %zu pages (%.0f MiB): the view wants %zu, %zu fit; the "
                           "finest levels that fit are kept, the rest drawn coarser",
                           demand.over_budget_pages,
                           double(demand.over_budget_pages * vt::page_bytes) / mib,
                           demand.recent_pages, demand.free_pages);
    }
    const vt::ResidencySample& residency = d.counters.residency.newest;
    if (residency.frame != 0) {
        ImGui::Text(
            "tiles sampled: %.0f%% of resident, %.0f%% of pages in use (%.0f MiB; "
            "by tile %.0f)",
            100 * residency.sampled_share(), 100 * residency.in_use_share(),
            double(residency.in_use_bytes) / mib, double(residency.tile_granular_bytes) / mib);
    }
    const vt::RequestLatencyStatistics& latency = d.counters.latency;
    ImGui::Text("request to visible p50 %llu / p99 %llu frames, %llu cancelled",
                static_cast<unsigned long long>(latency.frames_p50),
                static_cast<unsigned long long>(latency.frames_p99),
                static_cast<unsigned long long>(streamer.cancelled_requests));
    if (d.counters.governed) {
        const vt::GovernorDecision& g = d.counters.governor;
        ImGui::Text(
            "governor: budget %.0f MiB, %s pages/frame, bias %.2f", double(g.budget_bytes) / mib,
            g.publish_limit ? std::to_string(g.publish_limit).c_str() : "any", double(g.lod_bias));
    }
    ImGui::Separator();
    const PagePoolStatistics& pool = table.pool;
    ImGui::Text("pool reserved %.0f MiB (high %.0f)", double(pool.reserved_bytes) / mib,
                double(pool.reserved_bytes_high) / mib);
    ImGui::Text("pool used %.0f MiB (high %.0f)", double(pool.used_bytes) / mib,
                double(pool.used_bytes_high) / mib);
    ImGui::Text("pool hits %llu  misses %llu", static_cast<unsigned long long>(pool.hits),
                static_cast<unsigned long long>(pool.misses));
    ImGui::Text("indirection %llu entries in %llu uploads",
                static_cast<unsigned long long>(d.counters.indirection.uploaded_entries),
                static_cast<unsigned long long>(d.counters.indirection.uploads));
    if (d.validation) {
        ImGui::Text("validation messages %llu",
                    static_cast<unsigned long long>(d.counters.validation.total()));
    }
    ImGui::Separator();
    if (d.scene && d.flight_speed > 0) {  // a scene in a window: the speed flying would take
        ImGui::Text("camera %s, speed %.3g units/s, %s", d.camera.c_str(), d.flight_speed,
                    to_string(d.mode).c_str());
    } else if (d.scene) {
        ImGui::Text("camera %s, %s", d.camera.c_str(), to_string(d.mode).c_str());
    } else {
        ImGui::Text("camera %s, altitude %.0f texels, %s", d.camera.c_str(), d.pose.altitude,
                    to_string(d.mode).c_str());
    }
    if (d.window && d.scene) {
        ImGui::TextDisabled("WASD/arrows move, drag to look, Q/E down/up, wheel speed, Shift fast");
        ImGui::TextDisabled("M overlay  H HUD  P camera path  R start view  Esc quit");
    } else if (d.window) {
        ImGui::TextDisabled("WASD/arrows move, drag to look, wheel or Q/E altitude, Shift fast");
        ImGui::TextDisabled("M overlay  H HUD  P camera path  Esc quit");
    }
    ImGui::End();
    ImGui::Render();
}

void Hud::record(VkCommandBuffer commands, const OverlayTarget& target) {
    State& s = *state_;
    ImDrawData* draw_data = ImGui::GetDrawData();
    if (!draw_data) return;
    if (!s.framebuffer || s.framebuffer_view != target.view ||
        s.framebuffer_extent.width != target.extent.width ||
        s.framebuffer_extent.height != target.extent.height) {
        VkFramebufferCreateInfo info{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
        info.renderPass = s.render_pass.get();
        info.attachmentCount = 1;
        info.pAttachments = &target.view;
        info.width = target.extent.width;
        info.height = target.extent.height;
        info.layers = 1;
        VkFramebuffer framebuffer = VK_NULL_HANDLE;
        vk_check(vkCreateFramebuffer(s.context.device(), &info, nullptr, &framebuffer), "Hud",
                 "vkCreateFramebuffer");
        s.framebuffer = UniqueVkFramebuffer(s.context.device(), framebuffer);
        s.framebuffer_view = target.view;
        s.framebuffer_extent = target.extent;
    }
    VkRenderPassBeginInfo begin{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    begin.renderPass = s.render_pass.get();
    begin.framebuffer = s.framebuffer.get();
    begin.renderArea = {{0, 0}, target.extent};
    vkCmdBeginRenderPass(commands, &begin, VK_SUBPASS_CONTENTS_INLINE);
    ImGui_ImplVulkan_RenderDrawData(draw_data, commands);
    vkCmdEndRenderPass(commands);
}

void Hud::forget_targets() {
    State& s = *state_;
    s.context.wait_idle();
    s.framebuffer = {};
    s.framebuffer_view = VK_NULL_HANDLE;
}

bool Hud::wants_mouse() const { return ImGui::GetIO().WantCaptureMouse; }

bool Hud::wants_keyboard() const { return ImGui::GetIO().WantCaptureKeyboard; }

}  // namespace vtpage::viewer
