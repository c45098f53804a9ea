#include "vtpage/interop/virtual_texture_streaming.hpp"

#include <algorithm>

#include "vtpage/backend/backend.hpp"
#include "vtpage/interop/vulkan_context.hpp"
#include "vtpage/interop/vulkan_cuda_timeline.hpp"
#include "vtpage/interop/vulkan_timeline.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage {

namespace {

VkSemaphoreSubmitInfo semaphore_info(VkSemaphore semaphore, std::uint64_t value) {
    VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    info.semaphore = semaphore;
    info.value = value;
    info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    return info;
}

// How long shutdown waits for submitted frames before it gives up (a lost device).
constexpr std::uint64_t frame_wait_ns = 10'000'000'000;

}  // namespace

void StreamingFrame::submitted() {
    if (!lock_.owns_lock()) return;
    if (submitted_value_ && !signals_.empty()) {
        *submitted_value_ = std::max(*submitted_value_, signals_.front().value);
    }
    lock_.unlock();
}

VirtualTextureStreaming::VirtualTextureStreaming(VulkanContext& context, Backend& backend,
                                                 VirtualTextureStreamingSettings settings)
    : context_(context), settings_(std::move(settings)) {
    try {
        build(backend);
    } catch (...) {
        shutdown();  // what was built goes down in order too
        throw;
    }
}

VirtualTextureStreaming::~VirtualTextureStreaming() { shutdown(); }

// The order matters: the importer before the pool exists (attach), the indirection table before
// the streamer's events (connect), the CUDA timeline before the streamer's first fill.
void VirtualTextureStreaming::build(Backend& backend) {
    VirtualTextureStreamingSettings& s = settings_;
    vt::StreamerSettings& streamer = s.streamer;
    if (s.page_count == 0) s.page_count = streamer.table.region_size / vt::page_bytes;
    streamer.log = streamer.log.or_else(s.log);
    s.importer.log = s.importer.log.or_else(s.log);
    importer_ = std::make_unique<VulkanPageImporter>(context_, backend, s.importer);
    indirection_ = std::make_unique<VulkanIndirectionTable>(
        context_, *importer_,
        VulkanIndirectionTableSettings{.page_count = s.page_count,
                                       .frames_in_flight = s.frames_in_flight,
                                       .publish_when_filled = s.publish_when_filled,
                                       .log = s.log});
    directory_ = std::make_unique<VulkanTextureDirectory>(context_, s.directory);
    frames_ = std::make_unique<VulkanTimeline>(context_, 0, false, "vtpage frame timeline");
    importer_->attach(streamer.table.pool);
    indirection_->connect(streamer);
    if (backend.capabilities().gpu) {
        fills_ = std::make_unique<CudaVulkanTimeline>(context_, backend.capabilities().device);
        indirection_->set_fill_timeline(fills_->semaphore());
        streamer.on_fills_enqueued = [fills = fills_.get()](vt::CudaStream stream) {
            return fills->signal(static_cast<CUstream_st*>(stream));
        };
    }
    streamer_ = std::make_unique<vt::Streamer>(backend, streamer);
    indirection_->check_against(&streamer_->page_table());
    if (const std::size_t pages = std::min(s.warm_bytes, s.streamer.table.budget_bytes) /
                                  streamer_->page_table().pool().page_size()) {
        streamer_->page_table().pool().warm_up(pages, false);
    }
    feedback_ = std::make_unique<vt::FeedbackProcessor>(streamer_->textures(), s.feedback);
    if (s.feedback_thread) {
        feedback_worker_ = std::make_unique<vt::FeedbackWorker>(
            *streamer_, vt::FeedbackWorkerSettings{s.feedback});
    }
}

vt::TextureId VirtualTextureStreaming::add_texture(
    const std::shared_ptr<const vt::TileSource>& source) {
    if (!source) {
        throw Error(Errc::invalid_argument, "VirtualTextureStreaming::add_texture", "no source");
    }
    // Checked before the streamer has it: its tail page is committed and published at once.
    const vt::TextureShape shape = source->shape();
    const vt::TextureSet& set = streamer_->textures();
    const PageIndex base = set.first_page() + set.pages_used();
    const std::uint64_t pages = vt::TextureLayout(shape).page_count;
    if (base + pages > indirection_->page_count()) {
        throw Error(Errc::out_of_range, "VirtualTextureStreaming::add_texture",
                    "the texture's pages pass the indirection table (raise page_count)",
                    detail::concat("base=", base, " pages=", pages,
                                   " page_count=", indirection_->page_count()));
    }
    const vt::TextureId id = streamer_->add_texture(source);
    directory_->set(id, static_cast<std::uint32_t>(set.base_page(id)), shape);
    return id;
}

StreamingFrame VirtualTextureStreaming::begin_frame(VkCommandBuffer commands,
                                                    std::uint32_t frame_slot) {
    StreamingFrame frame;
    frame.lock_ = indirection_->lock_submission();
    frame.id_ = streamer_->begin_frame();
    directory_->record_upload(commands);
    frame.upload_ = indirection_->record_upload(commands, frame_slot);
    if (frame.upload_.wait_semaphore) {  // CUDA fills of pages this frame may now reach
        frame.waits_.push_back(
            semaphore_info(frame.upload_.wait_semaphore, frame.upload_.wait_value));
    }
    frame.signals_.push_back(semaphore_info(frames_->get(), ++frames_begun_));
    frame.submitted_value_ = &frames_submitted_;
    return frame;
}

vt::StreamRequestResult VirtualTextureStreaming::complete_frame(
    FrameId frame, std::span<const vt::FeedbackEntry> feedback) {
    if (feedback_worker_) {
        feedback_worker_->post(frame, feedback);
        if (std::exception_ptr error = feedback_worker_->take_error()) {
            std::rethrow_exception(error);
        }
        const vt::FeedbackFrameResult newest = feedback_worker_->last_result();
        return {.ready = newest.ready, .queued = newest.queued};
    }
    const vt::FeedbackResult result = feedback_->process(feedback);
    const vt::StreamRequestResult requested = streamer_->request(result.requests);
    streamer_->complete_frame(frame);
    return requested;
}

bool VirtualTextureStreaming::wait_idle(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (feedback_worker_) {
        if (!feedback_worker_->drain(timeout)) return false;
        if (std::exception_ptr error = feedback_worker_->take_error()) {
            std::rethrow_exception(error);
        }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (!streamer_->wait_idle(std::max(left, std::chrono::milliseconds(0)))) return false;
    if (fills_) fills_->timeline().wait(fills_->last_signaled());
    streamer_->rethrow_error();
    return true;
}

VkDeviceAddress VirtualTextureStreaming::indirection_address() const noexcept {
    return indirection_->device_address();
}
VkDeviceAddress VirtualTextureStreaming::directory_address() const noexcept {
    return directory_->device_address();
}
vt::Streamer& VirtualTextureStreaming::streamer() noexcept { return *streamer_; }
VulkanIndirectionTable& VirtualTextureStreaming::indirection() noexcept { return *indirection_; }
VulkanTextureDirectory& VirtualTextureStreaming::directory() noexcept { return *directory_; }
VulkanPageImporter& VirtualTextureStreaming::importer() noexcept { return *importer_; }
CudaVulkanTimeline* VirtualTextureStreaming::fills() noexcept { return fills_.get(); }

void VirtualTextureStreaming::wait_for_frames() noexcept {
    if (!frames_ || frames_submitted_ == 0) return;
    try {
        if (!frames_->wait(frames_submitted_, frame_wait_ns)) {
            settings_.log.error("streaming: submitted frames did not complete; tearing down");
        }
    } catch (const Error& error) {
        settings_.log.error("streaming: waiting for the submitted frames: ", error.what());
    }
}

void VirtualTextureStreaming::shutdown() noexcept {
    wait_for_frames();
    feedback_worker_.reset();  // completes the frames handed to it
    feedback_.reset();
    // The streamer's page table reports its evictions to the indirection table and destroys
    // every physical page through the importer: both must still be there.
    streamer_.reset();
    fills_.reset();  // no fill is pending once the streamer's workers have stopped
    frames_.reset();
    directory_.reset();
    indirection_.reset();
    importer_.reset();
}

}  // namespace vtpage
