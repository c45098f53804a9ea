#include "vtpage/interop/virtual_texture_streaming.hpp"

#include <algorithm>

#include "interop/decode_thread_governance.hpp"
#include "interop/streaming_governance.hpp"
#include "interop/visible_latency.hpp"
#include "streaming/feedback/stale_requests.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/base/trace.hpp"
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

// The feedback results kept for take_feedback_results(), as the worker keeps them.
constexpr std::size_t max_kept_results = 256;

double milliseconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

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
    size_region();
    s.streamer.log = s.streamer.log.or_else(s.log);
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
    importer_->attach(s.streamer.table.pool);
    indirection_->connect(s.streamer);
    wire_latency(s.streamer);
    governance_ = std::make_unique<StreamingGovernance>(
        StreamingGovernanceSettings{.governor = s.governor,
                                    .publish_limit = s.publish_limit,
                                    .memory_probe = s.memory_probe,
                                    .on_governed = s.on_governed},
        backend);
    decode_governance_ = std::make_unique<DecodeThreadGovernance>(decode_governor_settings());
    if (backend.capabilities().gpu) wire_fill_timeline(backend);
    streamer_ = std::make_unique<vt::Streamer>(backend, s.streamer);
    indirection_->check_against(&streamer_->page_table());
    governance_->streamer_made(*streamer_);
    warm_pool();
    feedback_ = std::make_unique<vt::FeedbackProcessor>(streamer_->textures(), s.feedback);
    if (s.feedback_thread) {
        start_feedback_thread();
    } else {
        stale_ = std::make_unique<vt::StaleRequests>();
        residency_ = vt::ResidencyEfficiency(s.residency_window_frames);
    }
}

// The decode threads' governor follows the app's frame-time target where it has one: its own,
// else the streaming governor's.
vt::DecodeThreadGovernorSettings VirtualTextureStreaming::decode_governor_settings() const {
    vt::DecodeThreadGovernorSettings governor = settings_.decode_governor;
    if (governor.frame_ms_target <= 0 && settings_.governor) {
        governor.frame_ms_target = settings_.governor->frame_ms_target;
    }
    return governor;
}

// An unset region is the indirection table's pages exactly, so that apps never multiply by
// the page size; an unset page_count the whole region.
void VirtualTextureStreaming::size_region() {
    std::size_t& region = settings_.streamer.table.region_size;
    std::uint64_t& pages = settings_.page_count;
    if (region == 0) region = pages ? pages * vt::page_bytes : PageTableSettings{}.region_size;
    if (pages == 0) pages = region / vt::page_bytes;
}

void VirtualTextureStreaming::wire_fill_timeline(Backend& backend) {
    fills_ = std::make_unique<CudaVulkanTimeline>(context_, backend.capabilities().device);
    indirection_->set_fill_timeline(fills_->semaphore());
    settings_.streamer.on_fills_enqueued = [fills = fills_.get()](vt::CudaStream stream) {
        return fills->signal(static_cast<CUstream_st*>(stream));
    };
}

void VirtualTextureStreaming::warm_pool() {
    PagePool& pool = streamer_->page_table().pool();
    const std::size_t bytes = std::min(settings_.warm_bytes, settings_.streamer.table.budget_bytes);
    if (const std::size_t pages = bytes / pool.page_size()) pool.warm_up(pages, false);
}

// Evictions reach the tracker from the streamer's workers (queued, applied later), after the
// indirection table and the app's callback have heard them.
void VirtualTextureStreaming::wire_latency(vt::StreamerSettings& streamer) {
    latency_ = std::make_unique<VisibleLatency>(settings_.latency);
    streamer.on_evicted = [latency = latency_.get(), theirs = std::move(streamer.on_evicted)](
                              std::span<const vt::StreamedPage> pages) {
        if (theirs) theirs(pages);
        latency->queue_evicted(pages);
    };
}

// The worker's hooks run on its thread, with none of its locks held.
void VirtualTextureStreaming::start_feedback_thread() {
    vt::FeedbackWorkerSettings worker{settings_.feedback, settings_.residency_window_frames};
    worker.on_requests = [this](FrameId frame, std::span<const vt::PageRequest> requests) {
        latency_->note_requested(frame, requests, *indirection_);
    };
    worker.on_withdrawn = [this](std::span<const PageIndex> pages) {
        latency_->note_withdrawn(pages, *streamer_);
    };
    worker.after_frame = [this](const vt::FeedbackFrameResult&) { after_feedback(); };
    feedback_worker_ = std::make_unique<vt::FeedbackWorker>(*streamer_, std::move(worker));
    if (paused_.load()) feedback_worker_->pause_requests(true);
}

vt::TextureId VirtualTextureStreaming::add_texture(
    const std::shared_ptr<const vt::TileSource>& source) {
    if (!source) {
        throw Error(Errc::invalid_argument, "VirtualTextureStreaming::add_texture", "no source");
    }
    // Checked before the streamer has it: its tail page is committed and published at once.
    const vt::TextureShape shape = source->shape();
    const vt::TextureSampling sampling = source->sampling();
    if (!vt::sampling_valid(sampling, shape)) {
        throw Error(Errc::invalid_argument, "VirtualTextureStreaming::add_texture",
                    "the source's sampling is not one the shaders know (sRGB is for rgba8, bc1 "
                    "and bc3)",
                    source->name());
    }
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
    directory_->set(id, static_cast<std::uint32_t>(set.base_page(id)), shape, sampling);
    return id;
}

StreamingFrame VirtualTextureStreaming::begin_frame(VkCommandBuffer commands,
                                                    std::uint32_t frame_slot) {
    StreamingFrame frame;
    frame.lock_ = indirection_->lock_submission();
    frame.id_ = streamer_->begin_frame();
    governance_->frame_begun(*indirection_);
    directory_->record_upload(commands);
    frame.upload_ = indirection_->record_upload(commands, frame_slot);
    count_upload(frame.id_, frame.upload_);
    if (frame.upload_.wait_semaphore) {  // CUDA fills of pages this frame may now reach
        frame.waits_.push_back(
            semaphore_info(frame.upload_.wait_semaphore, frame.upload_.wait_value));
    }
    frame.signals_.push_back(semaphore_info(frames_->get(), ++frames_begun_));
    frame.submitted_value_ = &frames_submitted_;
    return frame;
}

void VirtualTextureStreaming::count_upload(FrameId frame, const IndirectionUpload& upload) {
    const std::size_t pages = upload.published_pages.size();
    made_visible_.fetch_add(pages, std::memory_order_relaxed);
    if (pages > most_made_visible_.load(std::memory_order_relaxed)) {
        most_made_visible_.store(pages, std::memory_order_relaxed);  // only begin_frame writes
    }
    if (pages) uploads_.emplace_back(frame, upload.published_pages);
}

// The pages of the uploads recorded up to `frame` are visible now that it is complete: their
// wait ends (frames never completed, such as dropped ones, end with a later frame).
void VirtualTextureStreaming::frame_completed(FrameId frame) {
    const auto now = VisibleLatency::Clock::now();
    auto done = uploads_.begin();
    for (; done != uploads_.end() && done->first <= frame; ++done) {
        if (trace::active()) {  // the trace's first-visible event of each page (docs/trace.md)
            for (PageIndex page : done->second) trace::page_visible(page, done->first);
        }
        latency_->queue_visible(done->first, std::move(done->second), now);
    }
    uploads_.erase(uploads_.begin(), done);
}

vt::StreamRequestResult VirtualTextureStreaming::complete_frame(
    FrameId frame, std::span<const vt::FeedbackEntry> feedback) {
    frame_completed(frame);
    if (feedback_worker_) {
        feedback_worker_->post(frame, feedback);
        return newest_from_worker();
    }
    const vt::FeedbackFrameResult result = process_feedback_here(frame, feedback, true);
    keep_here(result);
    return {.ready = result.ready, .queued = result.queued};
}

vt::StreamRequestResult VirtualTextureStreaming::post_feedback(
    FrameId frame, std::span<const vt::FeedbackEntry> feedback) {
    if (feedback_worker_) {
        feedback_worker_->post_feedback(frame, feedback);
        return newest_from_worker();
    }
    if (frame <= here_last_posted_) {
        throw Error(Errc::invalid_argument, "VirtualTextureStreaming::post_feedback",
                    "frames' feedback comes in increasing order",
                    detail::concat("frame=", frame, " last=", here_last_posted_));
    }
    const vt::FeedbackFrameResult result = process_feedback_here(frame, feedback, false);
    keep_here(result);
    return {.ready = result.ready, .queued = result.queued};
}

void VirtualTextureStreaming::complete_frame(FrameId frame) {
    frame_completed(frame);
    if (feedback_worker_) {
        feedback_worker_->complete(frame);
        if (std::exception_ptr error = feedback_worker_->take_error()) {
            std::rethrow_exception(error);
        }
        return;
    }
    streamer_->complete_frame(frame);
}

vt::StreamRequestResult VirtualTextureStreaming::newest_from_worker() {
    if (std::exception_ptr error = feedback_worker_->take_error()) std::rethrow_exception(error);
    const vt::FeedbackFrameResult newest = feedback_worker_->last_result();
    return {.ready = newest.ready, .queued = newest.queued};
}

void VirtualTextureStreaming::keep_here(const vt::FeedbackFrameResult& result) {
    std::lock_guard lock(statistics_mutex_);
    ++here_statistics_.posted;
    ++here_statistics_.processed;
    here_statistics_.withdrawn += result.withdrawn;
    here_last_ = result;
    if (here_results_.size() < max_kept_results) here_results_.push_back(result);
}

// As the worker does it, on the caller's thread.
vt::FeedbackFrameResult VirtualTextureStreaming::process_feedback_here(
    FrameId frame, std::span<const vt::FeedbackEntry> feedback, bool completes) {
    vt::FeedbackFrameResult result{.frame = frame};
    here_last_posted_ = frame;
    auto start = std::chrono::steady_clock::now();
    feedback_->process(feedback, scratch_, processed_);
    result.samples = processed_.samples;
    result.requests = processed_.requests.size();
    result.process_ms = milliseconds_since(start);
    start = std::chrono::steady_clock::now();
    if (!paused_.load(std::memory_order_relaxed)) {
        const std::span<const PageIndex> withdrawn = stale_->withdraw(processed_, *streamer_, true);
        result.withdrawn = withdrawn.size();
        if (!withdrawn.empty()) latency_->note_withdrawn(withdrawn, *streamer_);
        latency_->note_requested(frame, processed_.requests, *indirection_);
        const vt::StreamRequestResult requested = streamer_->request(processed_.requests);
        result.ready = requested.ready;
        result.queued = requested.queued;
    }
    result.request_ms = milliseconds_since(start);
    // After the requests: a window's measure took 0.4 ms on the 1,050-texture set, and the
    // requests do not wait for it.
    if (settings_.residency_window_frames > 0) {
        residency_.add_frame(frame, scratch_.tiles);
        result.residency = residency_.measure_when_due(*streamer_);
    }
    start = std::chrono::steady_clock::now();
    if (completes) streamer_->complete_frame(frame);
    result.complete_ms = milliseconds_since(start);
    after_feedback();
    return result;
}

void VirtualTextureStreaming::after_feedback() {
    latency_->apply_events();
    queue_depth_.store(streamer_->pending_count(), std::memory_order_relaxed);
    const double frame_ms = governance_->take_frame_ms();
    governance_->govern(*streamer_, *indirection_, frame_ms);
    decode_governance_->govern(*streamer_, frame_ms);
}

bool VirtualTextureStreaming::drain_feedback(std::chrono::milliseconds timeout) {
    if (!feedback_worker_) return true;
    if (!feedback_worker_->drain(timeout)) return false;
    latency_->apply_events();  // the feedback thread is idle now
    if (std::exception_ptr error = feedback_worker_->take_error()) std::rethrow_exception(error);
    return true;
}

void VirtualTextureStreaming::pause_requests(bool paused) {
    paused_.store(paused);
    if (feedback_worker_) feedback_worker_->pause_requests(paused);
}

float VirtualTextureStreaming::lod_bias() const noexcept { return governance_->lod_bias(); }

std::vector<vt::FeedbackFrameResult> VirtualTextureStreaming::take_feedback_results() {
    if (feedback_worker_) return feedback_worker_->take_results();
    std::lock_guard lock(statistics_mutex_);
    return std::exchange(here_results_, {});
}

StreamingStatistics VirtualTextureStreaming::statistics() const {
    StreamingStatistics statistics;
    if (feedback_worker_) {
        statistics.feedback = feedback_worker_->statistics();
        statistics.last_feedback = feedback_worker_->last_result();
    } else {
        std::lock_guard lock(statistics_mutex_);
        statistics.feedback = here_statistics_;
        statistics.last_feedback = here_last_;
    }
    statistics.queue_depth = queue_depth_.load(std::memory_order_relaxed);
    statistics.pages_made_visible = made_visible_.load(std::memory_order_relaxed);
    statistics.most_made_visible = most_made_visible_.load(std::memory_order_relaxed);
    statistics.publish_limit = indirection_->publish_limit();
    statistics.latency = latency_->statistics();
    statistics.governed = governance_->governed();
    statistics.governor = governance_->decision();
    statistics.governor_statistics = governance_->statistics();
    statistics.decode_threads = streamer_->decode_threads();
    statistics.decode_threads_governed = decode_governance_->governed();
    statistics.decode_governor = decode_governance_->statistics();
    return statistics;
}

bool VirtualTextureStreaming::wait_idle(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!drain_feedback(timeout)) return false;
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
    stale_.reset();
    // The streamer's page table reports its evictions to the indirection table and destroys
    // every physical page through the importer: both must still be there.
    streamer_.reset();
    governance_.reset();
    decode_governance_.reset();
    latency_.reset();  // the streamer's workers, which report into it, are gone
    fills_.reset();    // no fill is pending once the streamer's workers have stopped
    frames_.reset();
    directory_.reset();
    indirection_.reset();
    importer_.reset();
}

}  // namespace vtpage
