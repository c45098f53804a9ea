// One object that wires a streamer to a renderer in the right order, and takes it apart in the
// reverse one: the page table's pool imports each physical page into the app's device
// (VulkanPageImporter), the streamer's ready / evicted events keep the indirection table
// current, the texture directory describes each texture, and on the GPU path CUDA fills signal
// a timeline that frames wait for (CudaVulkanTimeline).
//
//   VulkanContext context(app_handles, vulkan_device_requirements(backend));  // or vtpage's own
//   VirtualTextureStreaming streaming(context, backend, {.page_count = pages_of_all_textures});
//   auto id = streaming.add_texture(source);
//   each frame, in its command buffer, before the draws that sample:
//     StreamingFrame frame = streaming.begin_frame(commands, slot);
//     ... record the draws (push streaming.indirection_address(), directory_address(), id) ...
//     submit with frame.waits() and frame.signals() in the VkSubmitInfo2, then frame.submitted();
//   once the frame's GPU work is done and its feedback read:
//     streaming.complete_frame(frame.id(), feedback_entries);
//   or, sooner, where the app submits the feedback pass apart from the rest of the frame and
//   reads its feedback as soon as that part is done:
//     streaming.post_feedback(frame.id(), feedback_entries);   // the frame may still be drawn
//     streaming.complete_frame(frame.id());                     // once it is done
// With feedback_thread, complete_frame only copies the feedback and hands it to a thread of its
// own (vt::FeedbackWorker), so that the render thread never processes feedback. Without it,
// feedback is processed on the caller's thread before complete_frame returns. Either way the
// requests the newest feedback no longer makes are withdrawn.
//
// Threads: begin_frame, complete_frame, wait_idle, drain_feedback and shutdown are called from
// one thread at a time (the app's render thread); statistics(), lod_bias() and pause_requests()
// from any. "Where feedback is processed" below is the feedback thread with feedback_thread,
// the caller of complete_frame without.
//
// Locks: begin_frame takes the indirection table's submission lock (below) and, under it,
// applies the publish limit and records the uploads. The governor sets the publish limit under
// the table's own short lock only, never the submission lock. Pages made visible (render thread)
// and evicted (the streamer's workers) reach the latency tracking through a short queue lock of
// its own and are applied where feedback is processed. on_governed, the worker's hooks and the
// app's streamer callbacks run with none of this object's locks held.
//
// Around the frames, on request (all optional, all read through statistics()):
//   publish_limit     at most that many newly ready pages made visible per frame (from the
//                     first begin_frame on: the mip tails of textures added before it are not
//                     limited), the smaller of it and the governor's limit when both are set.
//   latency           request-to-visible latency of every page: from the frame whose feedback
//                     first asked for it to the first frame that samples it (completed);
//                     pages evicted or withdrawn before that count as dropped.
//   governor          a vt::StreamingGovernor run where feedback is processed, after each
//                     feedback: it sets the streamer's budget, evicts over it, sets the publish
//                     limit and a level-of-detail bias (lod_bias(), for the app's shaders);
//                     on_governed hears each decision.
//   decode threads    with streamer.file_reads.decode_threads 0 (the default), a
//                     vt::DecodeThreadGovernor run where feedback is processed, after each
//                     feedback, sets how many of the streamer's decode threads take pages from
//                     the frame times and the pages decoded per second (decode_governor).
//   pause_requests    feedback still processed and frames completed, nothing requested.
//
// GPU ordering it owns: the frame waits for the CUDA fills of the pages it may reach (none with
// publish_when_filled, the default: such pages appear once their fill is done), and signals the
// streaming's frame timeline, which shutdown() waits for. The submission lock that begin_frame
// takes (held until submitted()) keeps a physical page from being freed between the upload that
// stops pointing at it and the submit of the frame that recorded that upload.
//
// Teardown does not depend on member order: shutdown() (also run by the destructor) waits for
// the submitted frames, then destroys the streamer (its page table reports the evictions and
// destroys the pages through the importer), the CUDA timeline, the texture directory, the
// indirection table and the importer, in that order. The context outlives this object.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"
#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/feedback/feedback_worker.hpp"
#include "vtpage/streaming/feedback/request_latency_tracker.hpp"
#include "vtpage/streaming/governor/decode_thread_governor.hpp"
#include "vtpage/streaming/governor/streaming_governor.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage {

class CudaVulkanTimeline;
class DecodeThreadGovernance;
class StreamingGovernance;
class VisibleLatency;
namespace vt {
class StaleRequests;
}
class VulkanContext;
class VulkanTimeline;

// What one governed feedback decided, and what it was decided from (on_governed).
struct GovernedFrame {
    double seconds = 0;   // since the first frame began
    double frame_ms = 0;  // the longest frame (begin to begin) since the last decision; -1: none
    vt::GovernorDecision decision;
    std::size_t held_bytes = 0;  // the page pool's reserved bytes
    std::size_t resident_pages = 0;
    std::size_t device_free_bytes = 0;
};

// The streamer's region defaults to none here: sized from page_count (see below).
inline vt::StreamerSettings streamer_settings_sized_by_page_count() {
    vt::StreamerSettings settings;
    settings.table.region_size = 0;
    return settings;
}

struct VirtualTextureStreamingSettings {
    // Entries of the indirection table: the pages of every texture that will be added (global
    // page indices [0, page_count)). With streamer.table.region_size 0 (the default here), the
    // region is exactly those pages, so that an app never multiplies by the page size; with
    // page_count 0, the whole region of streamer.table (1 TiB when neither is set).
    std::uint64_t page_count = 0;
    // The app's frames in flight (the indirection table keeps a staging buffer per slot).
    std::uint32_t frames_in_flight = 2;
    // Hold ready pages back until their CUDA fill is done, so that frames never wait on the
    // device for fills (false: publish at once, the frame waits).
    bool publish_when_filled = true;
    // Bytes of physical pages created and imported before the first frame, rounded down to
    // whole pages and at most the budget (0: pages are made as they are committed).
    std::size_t warm_bytes = 0;
    // The streamer (budget in bytes, region, workers); callbacks set here still run, after
    // ours (on the streamer's threads, with none of this object's locks held).
    vt::StreamerSettings streamer = streamer_settings_sized_by_page_count();
    VulkanPageImporterSettings importer;
    VulkanTextureDirectorySettings directory;
    vt::FeedbackSettings feedback;
    // How much of what is resident the view samples (vt::ResidencyEfficiency): measured every
    // this many feedbacks over as many frames, in last_feedback.residency (0: not measured).
    std::uint32_t residency_window_frames = 8;
    // Process feedback on a thread of its own (complete_frame copies it and returns at once,
    // with the newest result processed so far); false: on the caller's thread, as it returns.
    bool feedback_thread = false;
    // Newly ready pages made visible per frame at most (0: no limit); see above.
    std::size_t publish_limit = 0;
    vt::RequestLatencySettings latency;
    // The governor, run where feedback is processed (off when empty). Its page_bytes and
    // max_budget_bytes are the streamer's; min_budget_bytes is raised to what the textures pin
    // when it first runs (textures added later do not raise it).
    std::optional<vt::StreamingGovernorSettings> governor;
    // The device's memory as the governor sees it; empty: the backend's memory_info().
    std::function<MemoryInfo()> memory_probe;
    // Hears each decision, where feedback is processed, with none of this object's locks held.
    std::function<void(const GovernedFrame&)> on_governed;
    // How the streamer's decode threads are governed when it chose them
    // (streamer.file_reads.decode_threads 0): its pool_threads and initial_threads are the
    // streamer's, and a frame_ms_target of 0 takes the governor's above where it is set (0
    // there too: each trial's frames are compared with those before it). invalid_argument
    // for settings it could not follow.
    vt::DecodeThreadGovernorSettings decode_governor;
    // Reaches every part whose own settings left the default log (the streamer and its page
    // table and pool, the importer).
    Log log;
};

// What the streaming did so far (statistics(): any thread).
struct StreamingStatistics {
    // Feedback: with feedback_thread the worker's figures; without, posted and processed count
    // the feedbacks processed on the caller's thread (never coalesced, no hand-off time).
    vt::FeedbackWorkerStatistics feedback;
    vt::FeedbackFrameResult last_feedback;  // the newest feedback processed
    std::size_t queue_depth = 0;  // the streamer's pending requests after the newest feedback
    // Uploads: pages made visible by begin_frame's indirection uploads.
    std::uint64_t pages_made_visible = 0;
    std::size_t most_made_visible = 0;  // by one frame's upload
    std::size_t publish_limit = 0;      // the indirection table's now (0: none)
    vt::RequestLatencyStatistics latency;
    bool governed = false;
    vt::GovernorDecision governor;  // the newest decision
    vt::StreamingGovernorStatistics governor_statistics;
    // The streamer's decode threads (pool, active, pages waiting for one), and their governor's
    // figures where it runs (streamer.file_reads.decode_threads 0, once feedback was processed).
    vt::DecodeThreadLoad decode_threads;
    bool decode_threads_governed = false;
    vt::DecodeThreadGovernorStatistics decode_governor;
};

// One frame's part: what its submission waits for and signals, and the submission lock.
class StreamingFrame {
public:
    StreamingFrame(StreamingFrame&&) noexcept = default;
    StreamingFrame& operator=(StreamingFrame&&) noexcept = default;
    ~StreamingFrame() = default;

    FrameId id() const noexcept { return id_; }
    const IndirectionUpload& upload() const noexcept { return upload_; }
    // For VkSubmitInfo2::pWaitSemaphoreInfos / pSignalSemaphoreInfos (with the app's own).
    std::span<const VkSemaphoreSubmitInfo> waits() const noexcept { return waits_; }
    std::span<const VkSemaphoreSubmitInfo> signals() const noexcept { return signals_; }
    // Call once vkQueueSubmit2 has returned (or the frame was dropped): releases the lock.
    void submitted();

private:
    friend class VirtualTextureStreaming;
    StreamingFrame() = default;

    FrameId id_ = 0;
    IndirectionUpload upload_;
    std::vector<VkSemaphoreSubmitInfo> waits_;
    std::vector<VkSemaphoreSubmitInfo> signals_;
    std::unique_lock<std::mutex> lock_;
    std::uint64_t* submitted_value_ = nullptr;  // the streaming's last submitted frame value
};

class VirtualTextureStreaming {
public:
    // Errors of the parts, as they are (not_supported where the device lacks an extension the
    // backend's pages need).
    VirtualTextureStreaming(VulkanContext& context, Backend& backend,
                            VirtualTextureStreamingSettings settings = {});
    ~VirtualTextureStreaming();  // shutdown()
    VirtualTextureStreaming(const VirtualTextureStreaming&) = delete;
    VirtualTextureStreaming& operator=(const VirtualTextureStreaming&) = delete;

    // Adds a texture to the streamer and describes it to the shaders; out_of_range when its
    // pages pass the indirection table.
    vt::TextureId add_texture(const std::shared_ptr<const vt::TileSource>& source);

    // Starts a frame: a streamer frame, and in `commands` the uploads of the indirection table
    // and the texture directory (frame_slot < frames_in_flight, its previous frame complete).
    [[nodiscard]] StreamingFrame begin_frame(VkCommandBuffer commands, std::uint32_t frame_slot);
    // Once the frame's GPU work is complete: its feedback becomes requests, and the pages it
    // used may be evicted again. With feedback_thread: handed over, and the result is that of
    // the newest feedback the thread has processed (ready and queued only); its errors are
    // rethrown here.
    vt::StreamRequestResult complete_frame(FrameId frame,
                                           std::span<const vt::FeedbackEntry> feedback);
    // The frame's feedback, read before the rest of its GPU work is done: it becomes requests
    // at once, and complete_frame(frame) follows once the frame is complete. Frames' feedback
    // comes in increasing order (invalid_argument otherwise). With feedback_thread, as above.
    vt::StreamRequestResult post_feedback(FrameId frame,
                                          std::span<const vt::FeedbackEntry> feedback);
    // Once the frame's GPU work is complete, its feedback posted (or it has none): the pages it
    // used may be evicted again, and those its upload published count as visible.
    void complete_frame(FrameId frame);
    // Waits until the feedback handed over is processed, nothing is pending and every fill has
    // reached the device; false on timeout. Rethrows a worker's error.
    bool wait_idle(std::chrono::milliseconds timeout);
    // Waits until the feedback handed over is processed (true at once without feedback_thread),
    // without waiting for the streamer; false on timeout. Rethrows the feedback thread's error.
    bool drain_feedback(std::chrono::milliseconds timeout);
    // While paused, feedback is still processed and frames completed, but nothing is requested.
    void pause_requests(bool paused);

    // Not after shutdown().
    StreamingStatistics statistics() const;
    // The feedbacks processed since the last call, oldest first (at most 256 kept).
    std::vector<vt::FeedbackFrameResult> take_feedback_results();
    // The governor's level-of-detail bias for the app's shaders (0 without a governor).
    float lod_bias() const noexcept;

    VkDeviceAddress indirection_address() const noexcept;
    VkDeviceAddress directory_address() const noexcept;
    vt::Streamer& streamer() noexcept;
    VulkanIndirectionTable& indirection() noexcept;
    VulkanTextureDirectory& directory() noexcept;
    VulkanPageImporter& importer() noexcept;
    CudaVulkanTimeline* fills() noexcept;  // nullptr on the host backend

    // Waits for the submitted frames and takes the parts down in order (see above); idempotent,
    // never throws (problems go to the log).
    void shutdown() noexcept;

private:
    void build(Backend& backend);
    void size_region();
    void wire_fill_timeline(Backend& backend);
    void warm_pool();
    void wire_latency(vt::StreamerSettings& streamer);
    vt::DecodeThreadGovernorSettings decode_governor_settings() const;
    void start_feedback_thread();
    // Caller's thread, without feedback_thread.
    // completes: the frame is complete too (complete_frame with feedback).
    vt::FeedbackFrameResult process_feedback_here(FrameId frame,
                                                  std::span<const vt::FeedbackEntry> feedback,
                                                  bool completes);
    // Keeps the result of feedback processed on the caller's thread.
    void keep_here(const vt::FeedbackFrameResult& result);
    // The feedback thread's newest result; rethrows its error.
    vt::StreamRequestResult newest_from_worker();
    // Where feedback is processed, after each: latency events, queue depth, the governor.
    void after_feedback();
    // begin_frame's upload, counted; its pages wait in uploads_ until their frame completes.
    void count_upload(FrameId frame, const IndirectionUpload& upload);
    void frame_completed(FrameId frame);
    void wait_for_frames() noexcept;

    VulkanContext& context_;
    VirtualTextureStreamingSettings settings_;
    std::unique_ptr<VulkanPageImporter> importer_;
    std::unique_ptr<VulkanIndirectionTable> indirection_;
    std::unique_ptr<VulkanTextureDirectory> directory_;
    std::unique_ptr<CudaVulkanTimeline> fills_;
    std::unique_ptr<vt::Streamer> streamer_;
    std::unique_ptr<vt::FeedbackProcessor> feedback_;
    std::unique_ptr<vt::FeedbackWorker> feedback_worker_;  // with feedback_thread
    std::unique_ptr<VulkanTimeline> frames_;  // the frames signal it: shutdown waits for it
    std::uint64_t frames_begun_ = 0;
    std::uint64_t frames_submitted_ = 0;
    // Made before the streamer (its workers report evictions into it), gone after it.
    std::unique_ptr<VisibleLatency> latency_;
    std::unique_ptr<StreamingGovernance> governance_;
    std::unique_ptr<DecodeThreadGovernance> decode_governance_;
    // Caller's thread: the uploads of frames begun and not yet completed (frame, pages).
    std::vector<std::pair<FrameId, std::vector<PageIndex>>> uploads_;
    // Caller's thread, without feedback_thread.
    vt::FeedbackScratch scratch_;
    vt::FeedbackResult processed_;
    std::unique_ptr<vt::StaleRequests> stale_;
    vt::ResidencyEfficiency residency_;
    std::atomic<bool> paused_{false};
    std::atomic<std::size_t> queue_depth_{0};     // written where feedback is processed
    std::atomic<std::uint64_t> made_visible_{0};  // written by begin_frame
    std::atomic<std::size_t> most_made_visible_{0};
    FrameId here_last_posted_ = 0;  // the caller's thread's newest feedback (no feedback_thread)
    // Guards the caller's-thread feedback figures below (written by complete_frame without
    // feedback_thread, read by statistics() and take_feedback_results()).
    mutable std::mutex statistics_mutex_;
    vt::FeedbackWorkerStatistics here_statistics_;
    vt::FeedbackFrameResult here_last_;
    std::vector<vt::FeedbackFrameResult> here_results_;
};

}  // namespace vtpage
