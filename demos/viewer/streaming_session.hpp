// Everything between the viewer's frame loop and the GPU: the backend, the Vulkan context, the
// streaming (VirtualTextureStreaming: the streamer, its pages imported into Vulkan, the
// indirection table and texture directory, CUDA -> Vulkan ordering of the fills, the feedback
// thread, the governor, the publish limit, latency and statistics) and the renderer, wired as
// docs/vulkan.md describes.
//
// Each frame: render() renders (the renderer begins the streaming's frame in its command buffer;
// frames in flight: nothing waits for the GPU unless it is frames_in_flight behind), and hands
// the feedback of every frame whose feedback pass the device has finished (read before the rest
// of its frame is done) to the streaming's post_feedback, whose feedback thread turns it into
// requests (the render thread only copies it out of the readback buffer), and completes the
// frames the device has finished (complete_frame). Requests the
// newest feedback no longer makes are withdrawn, so that the workers stream what is in view now
// rather than what was a second ago. Frames never wait for the streamer: ready pages are
// published once their fills are done (CUDA) and the image falls back to coarser levels until
// then.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "budget_totals.hpp"
#include "camera.hpp"
#include "input_errors.hpp"
#include "renderer/vulkan_reference_textures.hpp"
#include "renderer/vulkan_renderer.hpp"
#include "renderer/vulkan_scene_geometry.hpp"
#include "residency_totals.hpp"
#include "scene_layout.hpp"
#include "session_scene.hpp"
#include "usage_error.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/interop/virtual_texture_streaming.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/streaming/feedback/feedback_worker.hpp"
#include "vtpage/streaming/feedback/request_latency_tracker.hpp"
#include "vtpage/streaming/governor/streaming_governor.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::viewer {

struct SessionSettings {
    std::string backend = "auto";
    // "procedural", "identity" (vt::IdentitySource: every texel names itself), a baked file, or
    // a texture set: a folder of baked files or a manifest (texture_set_source.hpp), whose
    // textures are drawn side by side (scene_layout.hpp)
    std::string texture = "procedural";
    // A mesh scene drawn instead of the planes (texture is then unused): its textures are
    // streamed, its geometry drawn by every frame.
    std::shared_ptr<const SessionScene> scene;
    // The scene drawn with its textures as ordinary sampled images, every level resident
    // (VulkanReferenceTextures): the hardware reference vtpage is compared with.
    bool reference_textures = false;
    std::uint32_t texture_size_log2 = 20;  // of the procedural and identity textures
    std::uint32_t seed = 3;
    vt::TileFormat texture_format = vt::TileFormat::rgba8;  // of the procedural texture
    std::size_t budget_bytes = std::size_t(1) << 30;
    std::uint32_t width = 1280;
    std::uint32_t height = 720;
    std::uint32_t feedback_divisor = 4;
    bool deferred_texturing = true;
    std::uint32_t anisotropy = 1;       // VulkanRendererSettings::max_anisotropy
    bool scene_lod_from_device = true;  // VulkanRendererSettings::scene_lod_from_device
    // Feedback processed on the streaming's feedback thread; false: on the render thread as
    // each frame completes (the synchronous handling, for comparison).
    bool feedback_thread = true;
    // VulkanRendererSettings::identity_check on every textured frame (the identity texture).
    bool identity_check = false;
    std::size_t evict_ahead_pages = 64;      // PageTableSettings::evict_ahead_pages
    std::uint64_t recent_frames = 8;         // StreamerSettings::recent_frames
    std::uint64_t refault_hold_frames = 64;  // StreamerSettings::refault_hold_frames
    bool pack_tails = true;                  // StreamerSettings::pack_tails
    bool pack_levels = true;                 // StreamerSettings::pack_levels
    std::size_t decode_threads = 0;          // StreamerFileReads::decode_threads (0: the default)
    vt::DecodeThreadPriority decode_priority = vt::DecodeThreadPriority::low;
    std::size_t page_cache_copiers = 0;  // StreamerFileReads::page_cache_copiers (0: automatic)
    std::uint32_t tile_levels = 0;       // every texture's finest levels streamed by tile
    std::size_t decoded_pages_kept = vt::StreamerFileReads{}.decoded_pages_kept;
    std::size_t packed_level_pages = 0;  // StreamerSettings::packed_level_pages (0: automatic)
    bool tile_neighbours = true;         // vt::FeedbackSettings::tile_neighbours
    // The frame time the decode threads' governor holds (with decode_threads 0), with or without
    // the streaming governor; 0: none (each trial's frames against those before it).
    double decode_frame_ms_target = 0;
    std::uint32_t frames_in_flight = 2;
    std::size_t workers = 2;
    std::size_t batch_pages = 16;
    bool validation = false;
    // The streaming governor (VirtualTextureStreamingSettings::governor), run where feedback is
    // processed; its max_budget_bytes and page_bytes are the session's. Off when empty.
    std::optional<vt::StreamingGovernorSettings> governor;
    // Pages a frame may make visible at most (0: no limit); with the governor's limit, the
    // smaller. The textures' mip tails, visible before the first frame, are not limited.
    std::size_t upload_pages_per_frame = 0;
    vt::FileReadBackend read_backend =
        vt::FileReadBackend::automatic;  // StreamerFileReads::backend
    // The device's memory as the governor sees it; empty: the backend's memory_info(). Tests
    // script memory pressure with it.
    std::function<MemoryInfo()> memory_probe;
    // Create every physical page of the budget (and import it) before the first frame.
    bool warm_pool = true;
    // A window: VulkanContextSettings::instance_extensions and create_surface.
    std::vector<std::string> instance_extensions;
    std::function<VkSurfaceKHR(VkInstance)> create_surface;
    Log log;
};

// What the frame loop asks of one frame.
struct SessionFrame {
    std::array<float, 16> view_projection{};
    RenderMode mode = RenderMode::textured;
    bool capture = false;  // keep this frame's image (last_capture())
    std::function<void(VkCommandBuffer, const OverlayTarget&)> overlay;
    VulkanSwapchain* present_to = nullptr;
};

// What came back with a completed frame.
struct CompletedSummary {
    std::uint64_t frame = 0;
    double gpu_ms = 0;
    double textured_pass_ms = 0;  // the part of gpu_ms that the textured pass took
    IndirectionUpload upload;
    IdentityCheckResult identity;
    // The newest feedback the worker has processed (a frame or so behind this one).
    std::size_t feedback_samples = 0;
    std::size_t requests = 0;           // pages the feedback asked for (parents included)
    std::size_t resident_requests = 0;  // ... of which were ready
    std::size_t queued = 0;             // ... newly queued
    std::size_t queue_depth = 0;        // requests pending in the streamer as it completed
    std::size_t made_visible = 0;       // pages its indirection upload made visible
    std::uint64_t pages_filled = 0;     // pages the streamer has filled since it started
    // The budget less what is pinned (tails, packed levels), as the newest feedback found it;
    // 0 before the first.
    std::size_t free_budget_pages = 0;
    // Every feedback the worker processed since the previous summary, with its timings.
    std::vector<vt::FeedbackFrameResult> processed;
    SampleQuality quality;  // what its pixels got (the deferred textured pass)
    bool presented = false;
    // CPU time on the render thread: the renderer's render() call that handed it back (waiting
    // for the frame slot, recording, submitting; 0 for the second frame a call hands back) and
    // the feedback's (handing it to the worker).
    double render_ms = 0;
    double feedback_ms = 0;
    // The part of feedback_ms that copied the feedback out of the readback buffer (or that of
    // feedback read early, since the previous summary).
    double copy_ms = 0;
};

// One governed frame, for the pressure benchmark's timeline.
struct GovernorSample {
    double seconds = 0;  // since the session started
    double frame_ms = 0;
    std::size_t budget_bytes = 0;
    std::size_t held_bytes = 0;  // the page pool's reserved bytes
    std::size_t resident_pages = 0;
    std::size_t device_free_bytes = 0;
    std::size_t publish_limit = 0;
    float lod_bias = 0;
};

// The identity check over the frames completed so far (SessionSettings::identity_check).
struct IdentityCheckTotals {
    std::uint64_t frames = 0;  // frames checked
    std::uint64_t pixels = 0;  // pixels checked, over all of them
    std::uint64_t violations = 0;
    std::uint64_t coarser = 0;  // pixels that read a coarser level than wanted
    std::uint64_t frames_with_violations = 0;
    std::uint64_t first_violating_frame = 0;  // 0: none
};

// One texture of the session, and what of it is resident (texture_residency()).
struct SessionTexture {
    vt::TextureId id = 0;
    std::string name;
    vt::TextureShape shape;
    std::uint64_t pages = 0;           // TextureLayout::page_count
    std::uint64_t resident_pages = 0;  // filled in by texture_residency()
    std::uint64_t resident_texels = 0;
};

// Counters for statistics and the HUD, read without disturbing the workers much.
struct SessionCounters {
    vt::StreamerStatistics streamer;
    VulkanIndirectionTableStatistics indirection;
    ValidationMessageCounts validation;
    std::uint64_t frames = 0;
    std::uint64_t withdrawn_requests = 0;
    vt::FeedbackWorkerStatistics feedback;
    IdentityCheckTotals identity;
    bool governed = false;
    vt::GovernorDecision governor;  // the newest decision
    vt::StreamingGovernorStatistics governor_statistics;
    // Request to visible: from the frame whose feedback first asked for a page (not yet
    // visible) to the first frame that samples it.
    vt::RequestLatencyStatistics latency;
    std::uint64_t pages_made_visible = 0;  // by every frame's upload, settling included
    std::size_t most_made_visible = 0;     // by one frame's upload
    std::size_t publish_limit = 0;         // the indirection table's now (0: none)
    ResidencyTotals residency;             // how much of what is resident the view samples
    BudgetTotals budget;                   // the view against the budget, frame by frame
    // The decode threads' governor, where it runs (the streamer chose its decode threads; the
    // active count and the pool are in streamer.file_reads).
    bool decode_threads_governed = false;
    vt::DecodeThreadGovernorStatistics decode_governor;
};

class StreamingSession {
public:
    // UsageError for a texture that cannot be opened or read (bad input); Error otherwise.
    explicit StreamingSession(SessionSettings settings);
    // Waits for the frames in flight, then tears down in the documented order.
    ~StreamingSession();
    StreamingSession(const StreamingSession&) = delete;
    StreamingSession& operator=(const StreamingSession&) = delete;

    // Renders a frame; hands back, oldest first, every earlier frame the device has finished
    // (the one frames_in_flight earlier at least, waited for).
    std::vector<CompletedSummary> render(const SessionFrame& frame);
    // Waits for the frames in flight (their feedback still goes to the streamer).
    std::vector<CompletedSummary> finish();
    // Renders `frame` again and again, waiting for the streamer between frames, until a frame
    // asks for nothing that is not resident, and once more so that the image shows it; false
    // after `max_frames`, or when no page arrived for `timeout`. `last_quality`, where given,
    // gets the last settling frame's sample quality: what the settled image shows.
    bool settle(SessionFrame frame, std::chrono::milliseconds timeout, int max_frames = 200,
                SampleQuality* last_quality = nullptr);
    // Makes every page of every texture resident and waits for it (UsageError when the budget
    // cannot hold them all; busy when no page arrives for `stall`).
    void preload_all(std::chrono::milliseconds stall);
    // While paused, feedback is still read and processed but nothing is requested: nothing new
    // streams (the floor a benchmark compares streaming with).
    void pause_requests(bool paused) { streaming_->pause_requests(paused); }
    // New image size (frames in flight are waited for first).
    void resize(std::uint32_t width, std::uint32_t height);

    // The last captured image, RGBA8 rows from the top (empty until a captured frame completed).
    const std::vector<std::uint8_t>& last_capture() const noexcept { return capture_; }
    std::uint32_t capture_width() const noexcept { return capture_width_; }
    std::uint32_t capture_height() const noexcept { return capture_height_; }

    SessionCounters counters() const;
    VulkanContext& context() noexcept { return *context_; }
    const VulkanContext& context() const noexcept { return *context_; }
    VulkanRenderer& renderer() noexcept { return *renderer_; }
    const Backend& backend() const noexcept { return *backend_; }
    std::string backend_name() const;
    std::string device_name() const;
    // The texture's name, or for a texture set "N textures, M pages".
    std::string texture_name() const;
    // The first texture's shape (the only one's, but for a texture set).
    vt::TextureShape texture_shape() const noexcept { return textures_.front().shape; }
    bool texture_set() const noexcept { return texture_set_; }
    // The ground plane's side: the scene's larger side, one texel per unit.
    double plane_size() const noexcept { return plane_extent().larger(); }
    // What the camera flies over: the one texture's plane at its aspect, one texel per unit,
    // or the grid of a texture set's planes (scene_layout.hpp).
    PlaneExtent plane_extent() const noexcept { return scene_.extent; }
    // The mesh scene's bounds (SessionSettings::scene), nullptr when planes are drawn.
    const SceneBox* scene_box() const noexcept {
        return settings_.scene ? &settings_.scene->box : nullptr;
    }
    // The device memory of the scene's geometry (0 without one), and of the reference's images
    // (0 unless SessionSettings::reference_textures).
    std::uint64_t scene_geometry_bytes() const noexcept;
    std::uint64_t reference_texture_bytes() const noexcept;
    // The mesh scene's material stacks, and the material slots drawn through them (0 without).
    std::size_t scene_stacks() const noexcept {
        return settings_.scene ? settings_.scene->stacks.size() : 0;
    }
    std::size_t scene_stacked_slots() const noexcept {
        return settings_.scene ? settings_.scene->stacked_slots : 0;
    }
    const SceneLayout& scene() const noexcept { return scene_; }
    std::size_t budget_pages() const;
    // The texels that resident pages hold (TextureLayout::texels_in_page), summed over the
    // textures: what the budget holds, comparable across tile formats. Walks every page of
    // every texture: for the end of a run, not for every frame.
    std::uint64_t resident_texels() const;
    // Each texture with its resident pages and texels (the same walk).
    std::vector<SessionTexture> texture_residency() const;
    // The pages of every texture.
    std::uint64_t texture_pages() const noexcept;
    double startup_seconds() const noexcept { return startup_seconds_; }
    // The governor's frames so far (empty without a governor).
    std::vector<GovernorSample> governor_timeline() const;
    // The texture's pages that could not be read (corrupt or unreadable): the run goes on
    // without them, and ends with exit status 2 naming them.
    const InputErrors& input_errors() const noexcept { return input_errors_; }

private:
    CompletedSummary consume(const CompletedFrame& done);
    void post_early_feedback();
    std::unique_ptr<VulkanReferenceTextures> make_reference(
        std::span<const std::shared_ptr<const vt::TileSource>> sources);
    // The feedback the streaming processed since the last call, into `summary`.
    void collect_feedback_results(CompletedSummary& summary);
    // Waits for the feedback thread (the end of a run, settling): false past the deadline.
    bool drain_feedback(std::chrono::milliseconds timeout);
    void count_identity_check(const CompletedFrame& done);
    bool wait_idle_keeping_input_errors(std::chrono::milliseconds timeout);
    // Where feedback is processed (on_governed): the governor's timeline.
    void keep_governor_sample(const GovernedFrame& frame);
    // Throws the streamer's errors, other than the input errors kept in input_errors_.
    void rethrow_unless_input_error();

    SessionSettings settings_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<VulkanContext> context_;
    InputErrors input_errors_;           // outlives the streaming: its workers record into it
    mutable std::mutex governor_mutex_;  // guards governor_timeline_
    std::vector<GovernorSample> governor_timeline_;
    // The streamer wired to the context, with the frame protocol around it.
    std::unique_ptr<VirtualTextureStreaming> streaming_;
    std::unique_ptr<VulkanRenderer> renderer_;
    std::unique_ptr<VulkanSceneGeometry> scene_geometry_;  // drawn by every frame, where given
    std::unique_ptr<VulkanReferenceTextures> reference_;   // sampled instead, where asked
    std::vector<SessionTexture> textures_;                 // in the order added: ids 0, 1, 2 ...
    bool texture_set_ = false;
    SceneLayout scene_;
    std::vector<PlaneDraw> planes_;  // the scene, as each frame draws it
    std::uint64_t frames_ = 0;
    // Render-thread time handing over feedback read early, added to the next summary's copy_ms.
    double early_copy_ms_ = 0;
    vt::FeedbackFrameResult last_feedback_;  // render thread: the newest processed
    ResidencyTotals residency_;              // render thread: the samples of the run
    BudgetTotals budget_;                    // render thread: each processed feedback's
    IdentityCheckTotals identity_;
    std::vector<std::uint8_t> capture_;
    std::uint32_t capture_width_ = 0;
    std::uint32_t capture_height_ = 0;
    double startup_seconds_ = 0;
};

}  // namespace vtpage::viewer
