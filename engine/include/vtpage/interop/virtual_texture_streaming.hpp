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
// With feedback_thread, complete_frame only copies the feedback and hands it to a thread of its
// own (vt::FeedbackWorker), so that the render thread never processes feedback.
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

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "vtpage/base/log.hpp"
#include "vtpage/interop/vulkan_indirection_table.hpp"
#include "vtpage/interop/vulkan_page_importer.hpp"
#include "vtpage/interop/vulkan_texture_directory.hpp"
#include "vtpage/streaming/feedback/feedback_processor.hpp"
#include "vtpage/streaming/feedback/feedback_worker.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage {

class Backend;
class CudaVulkanTimeline;
class VulkanContext;
class VulkanTimeline;

struct VirtualTextureStreamingSettings {
    // Entries of the indirection table: the pages of every texture that will be added (global
    // page indices [0, page_count)); 0: the whole region of streamer.table.
    std::uint64_t page_count = 0;
    // The app's frames in flight (the indirection table keeps a staging buffer per slot).
    std::uint32_t frames_in_flight = 2;
    // Hold ready pages back until their CUDA fill is done, so that frames never wait on the
    // device for fills (false: publish at once, the frame waits).
    bool publish_when_filled = true;
    // Bytes of physical pages created and imported before the first frame, rounded down to
    // whole pages and at most the budget (0: pages are made as they are committed).
    std::size_t warm_bytes = 0;
    // The streamer (budget, region, workers); callbacks set here still run, after ours.
    vt::StreamerSettings streamer;
    VulkanPageImporterSettings importer;
    VulkanTextureDirectorySettings directory;
    vt::FeedbackSettings feedback;
    // Process feedback on a thread of its own (complete_frame copies it and returns at once,
    // with the newest result processed so far); false: on the caller's thread, as it returns.
    bool feedback_thread = false;
    // Reaches every part whose own settings left the default log (the streamer and its page
    // table and pool, the importer).
    Log log;
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
    // Waits until the feedback handed over is processed, nothing is pending and every fill has
    // reached the device; false on timeout. Rethrows a worker's error.
    bool wait_idle(std::chrono::milliseconds timeout);

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
};

}  // namespace vtpage
