#include "streaming_session.hpp"

#include <algorithm>
#include <utility>

#include "texture_set_source.hpp"
#include "vtpage/backend/backend_factory.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/interop/vulkan_cuda_timeline.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/identity_source.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"
#include "vtpage/streaming/sources/stack_source.hpp"
#include "vtpage/streaming/sources/tile_level_source.hpp"

namespace vtpage::viewer {

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A benchmark's timeline at a few thousand frames a second for minutes, no more.
constexpr std::size_t max_governor_samples = 1 << 20;

using Sources = std::vector<std::shared_ptr<const vt::TileSource>>;

// Layer pages kept for the fills of all of a scene's material stacks together.
constexpr std::size_t stack_cache_pages = 32;

// A scene's baked files, then its material stacks, each of the files' sources as its layers
// (the sources are shared: a layer's pages are read by its own texture and by the stack's
// fills). All the stacks keep their layer pages in one cache.
Sources scene_sources(const SessionScene& scene) {
    if (scene.texture_files.empty()) {
        throw UsageError(scene.name + ": the scene samples no image: there is nothing to stream");
    }
    Sources sources;
    for (const std::string& file : scene.texture_files) {
        sources.push_back(open_baked_texture(file));
    }
    if (scene.stacks.empty()) return sources;
    const auto cache = std::make_shared<vt::LayerPageCache>(stack_cache_pages);
    const std::size_t files = sources.size();
    for (const std::vector<std::size_t>& stack : scene.stacks) {
        Sources layers;
        for (const std::size_t file : stack) {
            if (file >= files) {
                throw UsageError(detail::concat(scene.name, ": a material stack names texture ",
                                                file, " of ", files));
            }
            layers.push_back(sources[file]);
        }
        try {
            sources.push_back(std::make_shared<vt::StackSource>(std::move(layers),
                                                                vt::StackSourceSettings{cache}));
        } catch (const Error& error) {
            if (error.code() != Errc::invalid_argument) throw;
            throw UsageError(scene.name + ": a material stack cannot be made: " + error.what());
        }
    }
    return sources;
}

Sources make_untiled_sources(const SessionSettings& settings) {
    if (settings.scene) return scene_sources(*settings.scene);
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

// The textures, streamed by tile in their finest levels where asked.
Sources make_sources(const SessionSettings& settings) {
    Sources sources = make_untiled_sources(settings);
    if (settings.tile_levels == 0) return sources;
    for (auto& source : sources) {
        source = std::make_shared<vt::TileLevelSource>(std::move(source), settings.tile_levels);
    }
    return sources;
}

// The source under a TileLevelSource, or the source itself.
const vt::TileSource* untiled(const vt::TileSource* source) {
    const auto* tiled = dynamic_cast<const vt::TileLevelSource*>(source);
    return tiled ? tiled->wrapped().get() : source;
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

// Every page of every texture has 2 MiB of the region's address space, and a tile level makes
// each of its tiles a page: past 64 TiB the region cannot be reserved, which is said at start.
void refuse_more_address_space_than_reserved(std::uint64_t page_count, std::uint32_t tile_levels) {
    constexpr std::uint64_t most_bytes = std::uint64_t(64) << 40;
    if (page_count <= most_bytes / vt::page_bytes) return;
    throw UsageError(detail::concat(
        "the textures take ", page_count, " pages (", page_count * vt::page_bytes >> 40,
        " TiB of address space) and at most 64 TiB can be reserved",
        tile_levels > 0 ? "; with --tile-levels each tile of those levels is a page: use fewer "
                          "tile levels or smaller textures"
                        : ""));
}

}  // namespace

StreamingSession::StreamingSession(SessionSettings settings) : settings_(std::move(settings)) {
    const auto start = Clock::now();
    const SessionSettings& s = settings_;
    // The textures first: bad input is the user's problem, said before any device work.
    Sources sources = make_sources(s);
    texture_set_ = s.scene || (s.texture != "procedural" && s.texture != "identity" &&
                               is_texture_set(s.texture));
    std::uint64_t page_count = 0;
    for (const auto& source : sources) page_count += vt::TextureLayout(source->shape()).page_count;
    refuse_more_address_space_than_reserved(page_count, s.tile_levels);
    const auto* identity = dynamic_cast<const vt::IdentitySource*>(untiled(sources.front().get()));
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
    // The textures one after another from the region's start: the region is sized from it.
    streaming.page_count = page_count;
    streaming.frames_in_flight = s.frames_in_flight;
    streaming.feedback_thread = s.feedback_thread;
    streaming.publish_limit = s.upload_pages_per_frame;  // the mip tails are not limited
    streaming.governor = s.governor;
    streaming.memory_probe = s.memory_probe;
    streaming.on_governed = [this](const GovernedFrame& frame) { keep_governor_sample(frame); };
    streaming.directory.max_textures = static_cast<std::uint32_t>(sources.size());
    streaming.publish_when_filled = true;  // frames never wait for CUDA fills
    // Each physical page created and imported now, not while flying (vAttention's way).
    streaming.warm_bytes = s.warm_pool ? s.budget_bytes : 0;
    streaming.log = s.log;  // reaches the streamer, its table and pool, and the importer
    vt::StreamerSettings& streamer_settings = streaming.streamer;
    streamer_settings.table.budget_bytes = s.budget_bytes;
    streamer_settings.table.evict_ahead_pages = s.evict_ahead_pages;
    streamer_settings.recent_frames = s.recent_frames;
    streamer_settings.refault_hold_frames = s.refault_hold_frames;
    streamer_settings.worker_threads = s.workers;
    streamer_settings.pack_tails = s.pack_tails;
    streamer_settings.pack_levels = s.pack_levels;
    streamer_settings.file_reads.decode_threads = s.decode_threads;
    streamer_settings.file_reads.decode_priority = s.decode_priority;
    streamer_settings.file_reads.page_cache_copiers = s.page_cache_copiers;
    streamer_settings.file_reads.decoded_pages_kept = s.decoded_pages_kept;
    streamer_settings.packed_level_pages = s.packed_level_pages;
    streaming.feedback.tile_neighbours = s.tile_neighbours;
    streaming.decode_governor.frame_ms_target = s.decode_frame_ms_target;
    streamer_settings.batch_pages = s.batch_pages;
    streamer_settings.file_reads.backend = s.read_backend;
    // Far more than a frame asks for: requests beyond it are the least important anyway.
    streamer_settings.max_pending = 16384;
    // A page of a corrupt file fails its fill: kept (and named at the end), the run goes on.
    streamer_settings.on_error = [errors = &input_errors_](const Error& error) {
        errors->record(error);
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
    if (s.scene) {
        std::vector<vt::TextureId> ids;
        for (const SessionTexture& texture : textures_) ids.push_back(texture.id);
        scene_geometry_ = std::make_unique<VulkanSceneGeometry>(*context_, s.scene->geometry(ids));
    }
    // The reference samples each file by its id (the files' ids come first); the stacks are
    // vtpage's alone.
    if (s.reference_textures) {
        const std::size_t files = s.scene ? s.scene->texture_files.size() : sources.size();
        reference_ = make_reference(std::span(sources).first(files));
    }
    renderer_ = std::make_unique<VulkanRenderer>(
        *context_, *streaming_,
        VulkanRendererSettings{.width = s.width,
                               .height = s.height,
                               .feedback_divisor = s.feedback_divisor,
                               .frames_in_flight = s.frames_in_flight,
                               .deferred_texturing = s.deferred_texturing,
                               .max_anisotropy = float(s.anisotropy),
                               .identity_check = s.identity_check,
                               .identity_texture_tag = identity ? identity->texture() : 0,
                               .scene_lod_from_device = s.scene_lod_from_device,
                               .reference_textures = reference_.get()});
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
    reference_.reset();
    scene_geometry_.reset();
    streaming_.reset();
}

std::uint64_t StreamingSession::scene_geometry_bytes() const noexcept {
    return scene_geometry_ ? scene_geometry_->bytes() : 0;
}

std::uint64_t StreamingSession::reference_texture_bytes() const noexcept {
    return reference_ ? reference_->bytes() : 0;
}

// Each texture as an image of every level, element `id` for texture id `id` (ids are given in
// the order textures are added, from 0).
std::unique_ptr<VulkanReferenceTextures> StreamingSession::make_reference(
    std::span<const std::shared_ptr<const vt::TileSource>> sources) {
    if (!settings_.scene) {
        throw UsageError("the reference textures are drawn for a scene (--scene)");
    }
    std::vector<ReferenceTexture> textures(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        textures.at(textures_[i].id) = read_reference_texture(*sources[i]);
    }
    return std::make_unique<VulkanReferenceTextures>(*context_, textures,
                                                     float(settings_.anisotropy));
}

std::vector<CompletedSummary> StreamingSession::render(const SessionFrame& frame) {
    FrameDesc desc;
    desc.view_projection = frame.view_projection;
    desc.planes = planes_;
    desc.scene = scene_geometry_.get();
    desc.mode = frame.mode;
    desc.capture = frame.capture;
    desc.overlay = frame.overlay;
    desc.present_to = frame.present_to;
    desc.lod_bias = streaming_->lod_bias();  // the renderer begins the streaming's frame
    ++frames_;
    const auto start = Clock::now();
    std::optional<CompletedFrame> done = renderer_->render(desc);
    const double render_ms = milliseconds_since(start);
    std::vector<CompletedSummary> completed;
    // The frame render() waited for (unless handed back already), then those the device has
    // finished since: their feedback reaches the streamer as soon as it can.
    if (!done) done = renderer_->take_completed();
    while (done) {
        const auto consumed = Clock::now();
        completed.push_back(consume(*done));
        completed.back().feedback_ms = milliseconds_since(consumed);
        done = renderer_->take_completed();
    }
    if (!completed.empty()) completed.front().render_ms = render_ms;
    post_early_feedback();
    return completed;
}

// The feedback of frames the device is still drawing, as soon as their feedback pass is done:
// in a frame loop bound by the device, one to two frames before the frames complete.
void StreamingSession::post_early_feedback() {
    while (std::optional<FrameFeedback> early = renderer_->take_feedback()) {
        const auto start = Clock::now();
        streaming_->post_feedback(early->user_tag, early->feedback);
        early_copy_ms_ += milliseconds_since(start);
    }
}

std::vector<CompletedSummary> StreamingSession::finish() {
    std::vector<CompletedSummary> completed;
    for (const CompletedFrame& done : renderer_->finish()) completed.push_back(consume(done));
    drain_feedback(std::chrono::seconds(10));
    if (!completed.empty()) collect_feedback_results(completed.back());
    return completed;
}

CompletedSummary StreamingSession::consume(const CompletedFrame& done) {
    CompletedSummary summary;
    summary.frame = done.frame;
    summary.gpu_ms = done.gpu_ms;
    summary.textured_pass_ms = done.textured_pass_ms;
    summary.upload = done.upload;
    summary.made_visible = done.upload.published_pages.size();
    summary.queue_depth = streaming_->streamer().pending_count();
    summary.pages_filled = streaming_->streamer().statistics().pages_filled;
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
    // read shows as such); the feedback thread does the rest (or this one, without it).
    const auto start = Clock::now();
    if (done.feedback_taken) {  // posted already (post_early_feedback)
        streaming_->complete_frame(done.user_tag);
    } else {
        streaming_->complete_frame(done.user_tag, done.feedback);
    }
    summary.copy_ms = milliseconds_since(start) + std::exchange(early_copy_ms_, 0.0);
    collect_feedback_results(summary);
    return summary;
}

void StreamingSession::collect_feedback_results(CompletedSummary& summary) {
    summary.processed = streaming_->take_feedback_results();
    for (const vt::FeedbackFrameResult& result : summary.processed) {
        budget_.add_frame(result.budget);
        residency_.add(result.residency);
    }
    if (!summary.processed.empty()) last_feedback_ = summary.processed.back();
    const vt::FeedbackFrameResult& newest = last_feedback_;
    summary.feedback_samples = newest.samples;
    summary.requests = newest.requests;
    summary.resident_requests = newest.ready;
    summary.queued = newest.queued;
    summary.free_budget_pages = newest.budget.free_pages;
}

bool StreamingSession::drain_feedback(std::chrono::milliseconds timeout) {
    if (streaming_->drain_feedback(timeout)) return true;
    settings_.log.error("viewer: the feedback worker did not finish in ", timeout.count(), " ms");
    return false;
}

// Where feedback is processed: one sample of the pressure benchmark's timeline.
void StreamingSession::keep_governor_sample(const GovernedFrame& frame) {
    GovernorSample sample;
    sample.seconds = frame.seconds;
    sample.frame_ms = frame.frame_ms;
    sample.budget_bytes = frame.decision.budget_bytes;
    sample.held_bytes = frame.held_bytes;
    sample.resident_pages = frame.resident_pages;
    sample.device_free_bytes = frame.device_free_bytes;
    sample.publish_limit = frame.decision.publish_limit;
    sample.lod_bias = frame.decision.lod_bias;
    std::lock_guard lock(governor_mutex_);
    if (governor_timeline_.size() < max_governor_samples) governor_timeline_.push_back(sample);
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

bool StreamingSession::settle(SessionFrame frame, std::chrono::milliseconds timeout, int max_frames,
                              SampleQuality* last_quality) {
    // The deadline moves with progress: a slow machine delivers pages late, a stuck view none.
    auto deadline = Clock::now() + timeout;
    std::uint64_t filled = streaming_->streamer().statistics().pages_filled;
    frame.capture = true;
    int clean = 0;
    for (int i = 0; i < max_frames && Clock::now() < deadline; ++i) {
        // Held back for their fills or for the per-frame limit: not in the image yet.
        const VulkanIndirectionTableStatistics table = streaming_->indirection().statistics();
        const bool nothing_held = table.awaiting_fill == 0 && table.waiting_for_limit == 0;
        std::optional<CompletedSummary> last;
        for (CompletedSummary& done : render(frame)) last = std::move(done);
        for (CompletedSummary& done : finish()) last = std::move(done);
        if (last && last_quality) *last_quality = last->quality;
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
        // A scene's pixels ask for one of their material's textures a frame, in turn (its
        // stack counting once): every one must have had its frame.
        if (clean >= (settings_.scene ? int(settings_.scene->feedback_units) + 1 : 2)) return true;
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
    const StreamingStatistics streaming = streaming_->statistics();
    counters.feedback = streaming.feedback;
    counters.governed = streaming.governed;
    counters.governor = streaming.governor;
    counters.governor_statistics = streaming.governor_statistics;
    counters.decode_threads_governed = streaming.decode_threads_governed;
    counters.decode_governor = streaming.decode_governor;
    counters.withdrawn_requests = streaming.feedback.withdrawn;
    counters.latency = streaming.latency;
    counters.pages_made_visible = streaming.pages_made_visible;
    counters.most_made_visible = streaming.most_made_visible;
    counters.publish_limit = streaming.publish_limit;
    counters.identity = identity_;
    counters.residency = residency_;
    counters.budget = budget_;
    return counters;
}

std::string StreamingSession::backend_name() const { return std::string(backend_->name()); }

std::string StreamingSession::device_name() const { return context_->device_name(); }

std::string StreamingSession::texture_name() const {
    if (settings_.scene) {
        const std::size_t stacks = settings_.scene->stacks.size();
        const std::size_t files = textures_.size() - stacks;
        return detail::concat(
            settings_.scene->name, " (", files, files == 1 ? " texture, " : " textures, ",
            stacks == 0 ? "" : detail::concat(stacks, stacks == 1 ? " stack, " : " stacks, "),
            texture_pages(), " pages)");
    }
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
