#include "streaming_session.hpp"

#include <algorithm>

#include "texture_set_source.hpp"
#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/interop/vulkan_cuda_timeline.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/identity_source.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace vtpage::viewer {

namespace {

using Clock = std::chrono::steady_clock;

// Limits on the pages a frame makes visible, 0 meaning none: the smaller of those set.
std::size_t combined_limit(std::size_t a, std::size_t b) {
    if (a == 0 || b == 0) return std::max(a, b);
    return std::min(a, b);
}

// A benchmark's timeline at a few thousand frames a second for minutes, no more.
constexpr std::size_t max_governor_samples = 1 << 20;

using Sources = std::vector<std::shared_ptr<const vt::TileSource>>;

Sources make_sources(const SessionSettings& settings) {
    if (settings.texture == "procedural") {
        return {std::make_shared<vt::ProceduralSource>(
            vt::ProceduralSettings{.seed = settings.seed,
                                   .size_log2 = settings.texture_size_log2,
                                   .format = settings.texture_format})};
    }
    if (settings.texture == "identity") {
        return {std::make_shared<vt::IdentitySource>(
            vt::IdentitySettings{.size_log2 = settings.texture_size_log2})};
    }
    if (is_texture_set(settings.texture)) return open_texture_set(settings.texture);
    return {open_baked_texture(settings.texture)};
}

// The textures' planes side by side (one texel a unit), and the draws that show them.
SceneLayout lay_out(const std::vector<SessionTexture>& textures, std::vector<PlaneDraw>& draws) {
    std::vector<PlaneExtent> extents;
    extents.reserve(textures.size());
    for (const SessionTexture& texture : textures) {
        extents.emplace_back(double(texture.shape.width), double(texture.shape.height));
    }
    SceneLayout scene = grid_layout(extents);
    draws.clear();
    for (std::size_t i = 0; i < textures.size(); ++i) {
        const PlanePlacement& plane = scene.planes[i];
        draws.push_back({.texture_id = textures[i].id,
                         .origin = {float(plane.x), float(plane.z)},
                         .extent = {float(plane.extent.x), float(plane.extent.z)}});
    }
    return scene;
}

// The streamer reads the mip tail page as the texture is added: a texture whose tail cannot be
// read cannot be drawn at all, which is bad input (exit 2, naming the page), not a failure.
vt::TextureId add_texture(VirtualTextureStreaming& streaming,
                          const std::shared_ptr<const vt::TileSource>& source) {
    const std::string name = source->name();
    try {
        return streaming.add_texture(source);
    } catch (const Error& error) {
        if (error.code() == Errc::budget_exhausted) throw UsageError(error.what());
        if (!InputErrors::is_input_error(error)) throw;
        throw UsageError("cannot use " + name +
                         " as a texture: its mip tail page cannot be read: " + error.detail());
    }
}

// Textures whose tails and coarse levels alone would pin more than the budget are refused at
// start (exit 2), not partway through the run.
void refuse_what_cannot_fit(std::span<const std::shared_ptr<const vt::TileSource>> sources,
                            const vt::StreamerSettings& settings) {
    std::vector<vt::TextureLayout> layouts;
    layouts.reserve(sources.size());
    for (const auto& source : sources) layouts.emplace_back(source->shape());
    const vt::PinnedPages pinned = vt::pinned_pages(layouts, settings);
    const std::size_t budget = settings.table.budget_bytes / vt::page_bytes;
    if (pinned.total() <= budget) return;
    throw UsageError(detail::concat(
        "the ", sources.size(), " textures pin ", pinned.total(), " pages (", pinned.tail_pages,
        " of mip tails, ", pinned.level_pages, " of packed coarse levels) and the budget holds ",
        budget, " (--budget-mib ", settings.table.budget_bytes >> 20, "): give at least ",
        (pinned.bytes() + (1u << 20) - 1) >> 20, " MiB, or fewer textures"));
}

}  // namespace

StreamingSession::StreamingSession(SessionSettings settings) : settings_(std::move(settings)) {
    const auto start = Clock::now();
    const SessionSettings& s = settings_;
    // The textures first: bad input is the user's problem, said before any device work.
    Sources sources = make_sources(s);
    texture_set_ =
        s.texture != "procedural" && s.texture != "identity" && is_texture_set(s.texture);
    std::uint64_t page_count = 0;
    for (const auto& source : sources) page_count += vt::TextureLayout(source->shape()).page_count;
    const auto* identity = dynamic_cast<const vt::IdentitySource*>(sources.front().get());
    if (s.identity_check && texture_set_) {
        throw UsageError("the identity check takes one texture, not the texture set " + s.texture);
    }
    if (s.identity_check && !identity) {
        throw UsageError("the identity check needs the identity texture, not " +
                         sources.front()->name());
    }

    backend_ = make_backend({.name = s.backend, .log = s.log});
    VulkanContextSettings context_settings;
    context_settings.application_name = "vtpage-viewer";
    context_settings.validation = s.validation ? ValidationMode::required : ValidationMode::off;
    context_settings.synchronization_validation = s.validation;
    context_settings.instance_extensions = s.instance_extensions;
    context_settings.create_surface = s.create_surface;
    context_settings.log = s.log;
    context_ = std::make_unique<VulkanContext>(
        VulkanContextSettings::for_backend(*backend_, std::move(context_settings)));

    VirtualTextureStreamingSettings streaming;
    streaming.page_count = page_count;  // the textures one after another from the region's start
    streaming.frames_in_flight = s.frames_in_flight;
    streaming.directory.max_textures = static_cast<std::uint32_t>(sources.size());
    streaming.publish_when_filled = true;  // frames never wait for CUDA fills
    // Each physical page created and imported now, not while flying (vAttention's way).
    streaming.warm_bytes = s.warm_pool ? s.budget_bytes : 0;
    streaming.log = s.log;  // reaches the streamer, its table and pool, and the importer
    vt::StreamerSettings& streamer_settings = streaming.streamer;
    streamer_settings.table.region_size = page_count * vt::page_bytes;
    streamer_settings.table.budget_bytes = s.budget_bytes;
    streamer_settings.table.evict_ahead_pages = s.evict_ahead_pages;
    streamer_settings.worker_threads = s.workers;
    streamer_settings.pack_tails = s.pack_tails;
    streamer_settings.pack_levels = s.pack_levels;
    streamer_settings.file_reads.decode_threads = s.decode_threads;
    streamer_settings.batch_pages = s.batch_pages;
    // Far more than a frame asks for: requests beyond it are the least important anyway.
    streamer_settings.max_pending = 16384;
    // A page of a corrupt file fails its fill: kept (and named at the end), the run goes on.
    streamer_settings.on_error = [errors = &input_errors_](const Error& error) {
        errors->record(error);
    };
    // A page evicted before it became visible will not be, for the request that tracked it.
    streamer_settings.on_evicted = [this](std::span<const vt::StreamedPage> pages) {
        LatencyEvent event;
        event.pages.reserve(pages.size());
        for (const vt::StreamedPage& page : pages) event.pages.push_back(page.page);
        queue_latency_event(std::move(event));
    };
    refuse_what_cannot_fit(sources, streaming.streamer);
    streaming_ =
        std::make_unique<VirtualTextureStreaming>(*context_, *backend_, std::move(streaming));
    for (const auto& source : sources) {
        const vt::TextureShape shape = source->shape();
        const std::string name = source->name();
        textures_.push_back({.id = add_texture(*streaming_, source),
                             .name = name,
                             .shape = shape,
                             .pages = vt::TextureLayout(shape).page_count});
    }
    scene_ = lay_out(textures_, planes_);
    // After the tails: they are visible from the first frame on.
    streaming_->indirection().set_publish_limit(s.upload_pages_per_frame);
    vt::FeedbackWorkerSettings feedback;
    feedback.on_requests = [this](FrameId frame, std::span<const vt::PageRequest> requests) {
        note_requests(frame, requests);
    };
    feedback.on_withdrawn = [this](std::span<const PageIndex> pages) { note_withdrawn(pages); };
    if (s.governor) {
        vt::StreamingGovernorSettings governor = *s.governor;
        vt::Streamer& streamer = streaming_->streamer();
        governor.page_bytes = streamer.page_table().page_size();
        governor.max_budget_bytes = streamer.page_table().budget_pages() * governor.page_bytes;
        // Never below what the textures pin: the streamer would refuse that budget.
        const std::size_t pinned =
            std::min<std::size_t>(streamer.pinned_pages().bytes(), governor.max_budget_bytes);
        governor.min_budget_bytes =
            std::clamp<std::size_t>(governor.min_budget_bytes, pinned, governor.max_budget_bytes);
        governor_ = std::make_unique<vt::StreamingGovernor>(governor);
        governor_decision_ = governor_->current();
        feedback.after_frame = [this](const vt::FeedbackFrameResult&) { govern(); };
    }
    feedback_ = std::make_unique<vt::FeedbackWorker>(streaming_->streamer(), feedback);
    renderer_ = std::make_unique<VulkanRenderer>(
        *context_, streaming_->indirection(), streaming_->directory(),
        VulkanRendererSettings{.width = s.width,
                               .height = s.height,
                               .feedback_divisor = s.feedback_divisor,
                               .frames_in_flight = s.frames_in_flight,
                               .deferred_texturing = s.deferred_texturing,
                               .identity_check = s.identity_check,
                               .identity_texture_tag = identity ? identity->texture() : 0});
    startup_seconds_ = std::chrono::duration<double>(Clock::now() - start).count();
}

StreamingSession::~StreamingSession() {
    try {
        if (renderer_) renderer_->finish();
    } catch (const Error& error) {
        settings_.log.error("viewer: waiting for the last frames: ", error.what());
    }
    // The renderer reads the indirection table and the directory: it goes first. The
    // streaming takes its own parts down in order; the context outlives it.
    renderer_.reset();
    feedback_.reset();
    streaming_.reset();
}

std::optional<CompletedSummary> StreamingSession::render(const SessionFrame& frame) {
    FrameDesc desc;
    desc.view_projection = frame.view_projection;
    desc.planes = planes_;
    desc.mode = frame.mode;
    desc.capture = frame.capture;
    desc.overlay = frame.overlay;
    desc.present_to = frame.present_to;
    desc.lod_bias = lod_bias_.load(std::memory_order_relaxed);
    desc.user_tag = streaming_->streamer().begin_frame();
    ++frames_;
    note_frame_time();
    const auto start = Clock::now();
    std::optional<CompletedFrame> done = renderer_->render(desc);
    const auto rendered = Clock::now();
    if (!done) return std::nullopt;
    CompletedSummary summary = consume(*done);
    summary.render_ms = std::chrono::duration<double, std::milli>(rendered - start).count();
    summary.feedback_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - rendered).count();
    return summary;
}

std::vector<CompletedSummary> StreamingSession::finish() {
    std::vector<CompletedSummary> completed;
    for (const CompletedFrame& done : renderer_->finish()) completed.push_back(consume(done));
    drain_feedback(std::chrono::seconds(10));
    apply_latency_events();  // the feedback thread is idle now
    if (!completed.empty()) collect_feedback_results(completed.back());
    return completed;
}

CompletedSummary StreamingSession::consume(const CompletedFrame& done) {
    CompletedSummary summary;
    summary.frame = done.frame;
    summary.gpu_ms = done.gpu_ms;
    summary.textured_pass_ms = done.textured_pass_ms;
    summary.upload = done.upload;
    // The frame the upload was recorded for is the first to sample its pages.
    if (!done.upload.published_pages.empty()) {
        queue_latency_event({.visible = true,
                             .frame = done.user_tag,
                             .time = vt::RequestLatencyTracker::Clock::now(),
                             .pages = done.upload.published_pages});
    }
    // The trace's first-visible event of each page (docs/trace.md).
    if (trace::active()) {
        for (PageIndex page : done.upload.published_pages) trace::page_visible(page, done.user_tag);
    }
    summary.made_visible = done.upload.published_pages.size();
    made_visible_.fetch_add(summary.made_visible, std::memory_order_relaxed);
    if (summary.made_visible > most_made_visible_.load(std::memory_order_relaxed)) {
        most_made_visible_.store(summary.made_visible, std::memory_order_relaxed);
    }
    summary.queue_depth = queue_depth_.load(std::memory_order_relaxed);
    summary.identity = done.identity;
    count_identity_check(done);
    summary.quality = done.quality;
    summary.presented = done.presented;
    if (!done.colour.empty()) {
        capture_.assign(done.colour.begin(), done.colour.end());
        capture_width_ = done.width;
        capture_height_ = done.height;
    }
    // The readback buffer is device-visible memory, read once here (timed apart, so that a slow
    // read shows as such); the worker's thread does the rest.
    const auto start = Clock::now();
    feedback_->post(done.user_tag, done.feedback);
    summary.copy_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!settings_.feedback_thread) drain_feedback(std::chrono::seconds(10));
    collect_feedback_results(summary);
    return summary;
}

void StreamingSession::collect_feedback_results(CompletedSummary& summary) {
    if (std::exception_ptr error = feedback_->take_error()) std::rethrow_exception(error);
    summary.processed = feedback_->take_results();
    const vt::FeedbackFrameResult newest = feedback_->last_result();
    summary.feedback_samples = newest.samples;
    summary.requests = newest.requests;
    summary.resident_requests = newest.ready;
    summary.queued = newest.queued;
}

bool StreamingSession::drain_feedback(std::chrono::milliseconds timeout) {
    if (feedback_->drain(timeout)) return true;
    settings_.log.error("viewer: the feedback worker did not finish in ", timeout.count(), " ms");
    return false;
}

void StreamingSession::note_frame_time() {
    const auto now = Clock::now();
    if (last_render_ == Clock::time_point{}) first_frame_ = now;  // before any feedback exists
    if (last_render_ != Clock::time_point{}) {
        const double ms = std::chrono::duration<double, std::milli>(now - last_render_).count();
        double seen = slowest_frame_ms_.load(std::memory_order_relaxed);
        while (ms > seen && !slowest_frame_ms_.compare_exchange_weak(seen, ms)) {}
    }
    last_render_ = now;
}

// On the feedback thread: evicting and trimming the pool (cuMemRelease, vkFreeMemory) never
// runs on the render thread.
void StreamingSession::govern() {
    const double frame_ms = slowest_frame_ms_.exchange(-1.0);
    const MemoryInfo memory =
        settings_.memory_probe ? settings_.memory_probe() : backend_->memory_info();
    vt::Streamer& streamer = streaming_->streamer();
    const std::size_t held = streamer.page_table().pool().statistics().reserved_bytes;
    const std::size_t budget_before = governor_->current().budget_bytes;
    const vt::GovernorDecision decision = governor_->update({frame_ms, memory.free, held});
    if (decision.budget_bytes != budget_before) streamer.set_budget(decision.budget_bytes);
    if (decision.evict_pages > 0) streamer.evict_over_budget(decision.evict_pages);
    streaming_->indirection().set_publish_limit(
        combined_limit(decision.publish_limit, settings_.upload_pages_per_frame));
    lod_bias_.store(decision.lod_bias, std::memory_order_relaxed);
    GovernorSample sample;
    sample.seconds = std::chrono::duration<double>(Clock::now() - first_frame_).count();
    sample.frame_ms = frame_ms;
    sample.budget_bytes = decision.budget_bytes;
    sample.held_bytes = held;
    sample.resident_pages = streamer.page_table().resident_count();
    sample.device_free_bytes = memory.free;
    sample.publish_limit = decision.publish_limit;
    sample.lod_bias = decision.lod_bias;
    std::lock_guard lock(governor_mutex_);
    governor_decision_ = decision;
    governor_statistics_ = governor_->statistics();
    if (governor_timeline_.size() < max_governor_samples) governor_timeline_.push_back(sample);
}

// Pages already visible are left out: their wait is over (the table is the judge, since a page
// ready in the streamer may still be held back for its fill or the upload limit).
void StreamingSession::note_requests(FrameId frame, std::span<const vt::PageRequest> requests) {
    apply_latency_events();
    queue_depth_.store(streaming_->streamer().pending_count(), std::memory_order_relaxed);
    const VulkanIndirectionTable& indirection = streaming_->indirection();
    not_visible_.clear();
    for (const vt::PageRequest& request : requests) {
        if (!indirection.slot_of(request.page)) not_visible_.push_back(request.page);
    }
    latency_.note_requested(frame, not_visible_);
}

// A withdrawn page still being filled, or filled and not yet published, becomes visible all the
// same: it keeps its wait. Asked first whether it is queued (being filled), then whether it is
// ready, so that a fill ending in between is not taken for a cancellation.
void StreamingSession::note_withdrawn(std::span<const PageIndex> pages) {
    apply_latency_events();
    const vt::Streamer& streamer = streaming_->streamer();
    cancelled_.clear();
    for (PageIndex page : pages) {
        if (!streamer.is_queued(page) && !streamer.is_ready(page)) cancelled_.push_back(page);
    }
    latency_.note_dropped(cancelled_);
}

void StreamingSession::queue_latency_event(LatencyEvent event) {
    std::lock_guard lock(latency_events_mutex_);
    latency_events_.push_back(std::move(event));
}

void StreamingSession::apply_latency_events() {
    std::vector<LatencyEvent> taken;
    {
        std::lock_guard lock(latency_events_mutex_);
        taken.swap(latency_events_);
    }
    for (const LatencyEvent& event : taken) {
        if (event.visible) {
            latency_.note_visible(event.frame, event.pages, event.time);
        } else {
            latency_.note_dropped(event.pages);
        }
    }
}

std::vector<GovernorSample> StreamingSession::governor_timeline() const {
    std::lock_guard lock(governor_mutex_);
    return governor_timeline_;
}

void StreamingSession::count_identity_check(const CompletedFrame& done) {
    if (!done.identity.ran) return;
    ++identity_.frames;
    identity_.pixels += done.identity.pixels;
    identity_.violations += done.identity.violations;
    identity_.coarser += done.identity.coarser;
    if (done.identity.violations == 0) return;
    ++identity_.frames_with_violations;
    if (identity_.first_violating_frame == 0) identity_.first_violating_frame = done.frame;
}

// VirtualTextureStreaming::wait_idle rethrows every worker error; the viewer keeps going past a
// corrupt page of its input (named at the end), so it waits on the parts itself.
bool StreamingSession::wait_idle_keeping_input_errors(std::chrono::milliseconds timeout) {
    if (!streaming_->streamer().wait_idle(timeout)) return false;
    if (CudaVulkanTimeline* fills = streaming_->fills()) {
        fills->timeline().wait(fills->last_signaled());
    }
    return true;
}

void StreamingSession::rethrow_unless_input_error() {
    while (std::exception_ptr error = streaming_->streamer().take_error()) {
        try {
            std::rethrow_exception(error);
        } catch (const Error& caught) {
            if (!InputErrors::is_input_error(caught)) throw;
        }
    }
}

bool StreamingSession::settle(SessionFrame frame, std::chrono::milliseconds timeout,
                              int max_frames) {
    // The deadline moves with progress: a slow machine delivers pages late, a stuck view none.
    auto deadline = Clock::now() + timeout;
    std::uint64_t filled = streaming_->streamer().statistics().pages_filled;
    frame.capture = true;
    int clean = 0;
    for (int i = 0; i < max_frames && Clock::now() < deadline; ++i) {
        // Held back for their fills or for the per-frame limit: not in the image yet.
        const VulkanIndirectionTableStatistics table = streaming_->indirection().statistics();
        const bool nothing_held = table.awaiting_fill == 0 && table.waiting_for_limit == 0;
        std::optional<CompletedSummary> last = render(frame);
        for (CompletedSummary& done : finish()) last = std::move(done);
        if (!streaming_->streamer().wait_idle_while_progressing(timeout) ||
            !wait_idle_keeping_input_errors(timeout))
            return false;
        rethrow_unless_input_error();
        const std::uint64_t now_filled = streaming_->streamer().statistics().pages_filled;
        if (now_filled != filled) deadline = Clock::now() + timeout;
        filled = now_filled;
        // Clean: every page the frame asked for was resident when it was drawn. Twice in a row,
        // so that the last image was drawn after the table had every one of them.
        const bool all_ready = last && last->requests == last->resident_requests;
        clean = all_ready && nothing_held ? clean + 1 : 0;
        if (clean >= 2) return true;
    }
    return false;
}

void StreamingSession::preload_all(std::chrono::milliseconds stall) {
    const std::uint64_t pages = texture_pages();
    if (pages > budget_pages()) {
        throw UsageError(detail::concat("--preload-all: the ",
                                        texture_set_ ? "texture set has " : "texture has ", pages,
                                        " pages, the budget holds ", budget_pages(),
                                        " (raise --budget-mib or use a smaller texture)"));
    }
    std::vector<PageIndex> all;
    for (const SessionTexture& texture : textures_) {
        const PageIndex base = streaming_->streamer().textures().base_page(texture.id);
        for (std::uint64_t page = 0; page < texture.pages; ++page) all.push_back(base + page);
    }
    streaming_->streamer().request(all);
    // A slow machine (a sanitizer, a busy CPU) takes long but keeps delivering pages; only a
    // stall is an error.
    if (!streaming_->streamer().wait_idle_while_progressing(stall) ||
        !wait_idle_keeping_input_errors(stall)) {
        throw Error(Errc::busy, "StreamingSession::preload_all",
                    detail::concat("streaming made no progress for ", stall.count() / 1000, " s"));
    }
    rethrow_unless_input_error();
    for (PageIndex page : all) {
        if (!streaming_->streamer().is_ready(page) && input_errors_.count() == 0) {
            throw Error(Errc::busy, "StreamingSession::preload_all", "a page is not resident",
                        detail::concat("page=", page));
        }
    }
}

void StreamingSession::resize(std::uint32_t width, std::uint32_t height) {
    finish();
    renderer_->resize(width, height);
}

SessionCounters StreamingSession::counters() const {
    SessionCounters counters;
    counters.streamer = streaming_->streamer().statistics();
    counters.indirection = streaming_->indirection().statistics();
    counters.validation = context_->validation_messages();
    counters.frames = frames_;
    counters.feedback = feedback_->statistics();
    if (governor_) {
        std::lock_guard lock(governor_mutex_);
        counters.governed = true;
        counters.governor = governor_decision_;
        counters.governor_statistics = governor_statistics_;
    }
    counters.withdrawn_requests = counters.feedback.withdrawn;
    counters.latency = latency_.statistics();
    counters.pages_made_visible = made_visible_.load(std::memory_order_relaxed);
    counters.most_made_visible = most_made_visible_.load(std::memory_order_relaxed);
    counters.publish_limit = streaming_->indirection().publish_limit();
    counters.identity = identity_;
    return counters;
}

std::string StreamingSession::backend_name() const { return std::string(backend_->name()); }

std::string StreamingSession::device_name() const { return context_->device_name(); }

std::string StreamingSession::texture_name() const {
    if (!texture_set_) return textures_.front().name;
    return detail::concat(textures_.size(), textures_.size() == 1 ? " texture, " : " textures, ",
                          texture_pages(), " pages");
}

std::size_t StreamingSession::budget_pages() const {
    return streaming_->streamer().page_table().budget_pages();
}

std::uint64_t StreamingSession::resident_texels() const {
    std::uint64_t texels = 0;
    for (const SessionTexture& texture : texture_residency()) texels += texture.resident_texels;
    return texels;
}

std::vector<SessionTexture> StreamingSession::texture_residency() const {
    vt::Streamer& streamer = streaming_->streamer();
    std::vector<SessionTexture> textures = textures_;
    for (SessionTexture& texture : textures) {
        const vt::TextureLayout layout = streamer.textures().layout(texture.id);
        const PageIndex base = streamer.textures().base_page(texture.id);
        for (std::uint64_t page = 0; page < layout.page_count; ++page) {
            // A packed tail or coarse level lives in a shared page: ready, not in the table.
            if (!streamer.page_table().is_resident(base + page) &&
                !streamer.is_ready(base + page)) {
                continue;
            }
            ++texture.resident_pages;
            texture.resident_texels += layout.texels_in_page(page);
        }
    }
    return textures;
}

std::uint64_t StreamingSession::texture_pages() const noexcept {
    std::uint64_t pages = 0;
    for (const SessionTexture& texture : textures_) pages += texture.pages;
    return pages;
}

}  // namespace vtpage::viewer
