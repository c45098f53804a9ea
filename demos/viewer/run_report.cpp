#include "run_report.hpp"

#include <cstdio>

#include "camera_path.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::viewer {

namespace {

constexpr double mib = 1024.0 * 1024.0;

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

nlohmann::json percentiles_json(const Percentiles& p) {
    return {{"count", p.count}, {"p50", p.p50}, {"p90", p.p90},
            {"p99", p.p99},     {"max", p.max}, {"mean", p.mean}};
}

std::string percent(double share) { return fixed(share * 100.0, 1) + " %"; }

nlohmann::json cut_json(const CutRecovery& cut) {
    nlohmann::json json = {{"frame", cut.frame},
                           {"seconds", cut.seconds},
                           {"outcome", std::string(to_string(cut.outcome))},
                           {"best_share_at_wanted_level", cut.best_share},
                           {"working_set_pages", cut.working_set_pages},
                           {"settled", cut.settled}};
    if (cut.outcome == CutOutcome::reached) {
        json["frames"] = cut.frames;
        json["ms"] = cut.ms;
        json["pages_filled"] = cut.pages_filled;
        json["pages_per_second"] = cut.pages_per_second();
    }
    return json;
}

// Not measured (forward plane texturing, an overlay mode, the reference textures): says so and
// nothing more.
nlohmann::json quality_json(const RunReport& r) {
    const QualityFigures& q = r.quality;
    if (!q.measured) return {{"measured", false}};
    nlohmann::json cuts = nlohmann::json::array();
    for (const CutRecovery& cut : r.cuts) cuts.push_back(cut_json(cut));
    const FullDetailFigures& f = r.full_detail;
    return {
        {"measured", true},
        {"frames", q.frames},
        // The last frame's pixels on the plane, or a scene's fragments of textured materials.
        {"counted_last", q.last.plane_pixels},
        {"share_at_wanted_level",
         {{"p50", q.share_p50},
          {"min", q.share_min},
          {"mean", q.share_mean},
          {"last", q.last.share_at_wanted_level()}}},
        {"mean_levels_missing",
         {{"p50", q.missing_p50},
          {"max", q.missing_max},
          {"mean", q.missing_mean},
          {"last", q.last.mean_levels_missing()}}},
        {"full_detail_share", full_detail_share},
        {"cuts", cuts},
        {"time_to_full_detail",
         {{"cuts", f.cuts},
          {"reached", f.reached},
          {"over_budget", f.over_budget},
          {"not_reached", f.not_reached},
          {"frames", percentiles_json(f.frames)},
          {"ms", percentiles_json(f.ms)}}},
    };
}

std::string quality_rows(const RunReport& r) {
    const QualityFigures& q = r.quality;
    std::string text;
    auto row = [&](const std::string& what, const std::string& value) {
        text += "| " + what + " | " + value + " |\n";
    };
    if (!q.measured) {
        row("pixels at their wanted level", "not measured (forward texturing or an overlay)");
        return text;
    }
    row("pixels at their wanted level p50 / min / last",
        percent(q.share_p50) + " / " + percent(q.share_min) + " / " +
            percent(q.last.share_at_wanted_level()));
    row("levels missing, mean per pixel p50 / max / last",
        fixed(q.missing_p50, 3) + " / " + fixed(q.missing_max, 3) + " / " +
            fixed(q.last.mean_levels_missing(), 3));
    const FullDetailFigures& f = r.full_detail;
    if (f.cuts == 0) return text;
    std::string value = detail::concat(f.reached, " of ", f.cuts, " cuts");
    if (f.reached > 0) {
        value += detail::concat(": frames p50 ", fixed(f.frames.p50, 0), " / max ",
                                fixed(f.frames.max, 0), ", ms p50 ", fixed(f.ms.p50, 0), " / max ",
                                fixed(f.ms.max, 0));
    }
    if (f.over_budget > 0) value += detail::concat("; over budget ", f.over_budget);
    if (f.not_reached > 0) value += detail::concat("; not reached ", f.not_reached);
    row("full detail (" + fixed(full_detail_share * 100.0, 0) + " % of pixels) after a cut", value);
    return text;
}

// The timeline as columns: compact, and what a plot reads.
nlohmann::json governor_json(const RunReport& r) {
    constexpr double mib = 1024.0 * 1024.0;
    nlohmann::json timeline = {
        {"seconds", nlohmann::json::array()},        {"frame_ms", nlohmann::json::array()},
        {"budget_mib", nlohmann::json::array()},     {"held_mib", nlohmann::json::array()},
        {"resident_pages", nlohmann::json::array()}, {"device_free_mib", nlohmann::json::array()},
        {"publish_limit", nlohmann::json::array()},  {"lod_bias", nlohmann::json::array()}};
    for (const GovernorSample& sample : r.governor_timeline) {
        timeline["seconds"].push_back(sample.seconds);
        timeline["frame_ms"].push_back(sample.frame_ms);
        timeline["budget_mib"].push_back(double(sample.budget_bytes) / mib);
        timeline["held_mib"].push_back(double(sample.held_bytes) / mib);
        timeline["resident_pages"].push_back(sample.resident_pages);
        timeline["device_free_mib"].push_back(double(sample.device_free_bytes) / mib);
        timeline["publish_limit"].push_back(sample.publish_limit);
        timeline["lod_bias"].push_back(sample.lod_bias);
    }
    return {{"frames", r.governor.frames},
            {"frames_over_target", r.governor.frames_over_target},
            {"shrinks", r.governor.shrinks},
            {"grows", r.governor.grows},
            {"lowest_budget_mib", double(r.governor.lowest_budget_bytes) / mib},
            {"lowest_publish_limit", r.governor.lowest_publish_limit},
            {"highest_lod_bias", r.governor.highest_lod_bias},
            {"final_budget_mib", double(r.governor_decision.budget_bytes) / mib},
            {"frame_ms_target", r.frame_ms_target},
            {"timeline", timeline}};
}

nlohmann::json latency_json(const RunReport& r) {
    const vt::RequestLatencyStatistics& l = r.latency;
    return {{"request_to_visible",
             {{"samples", l.samples},
              {"frames", {{"p50", l.frames_p50}, {"p99", l.frames_p99}, {"max", l.frames_max}}},
              {"ms", {{"p50", l.ms_p50}, {"p99", l.ms_p99}, {"max", l.ms_max}}}}},
            {"dropped", l.dropped},
            {"refused", l.refused},
            {"tracked", l.tracked},
            {"queue_depth", {{"p50", r.queue_depth.p50}, {"max", r.queue_depth.max}}},
            {"cancelled_requests", r.cancelled_requests},
            {"pages_made_visible",
             {{"total", r.pages_made_visible},
              {"per_frame_p50", r.made_visible.p50},
              {"per_frame_max", r.most_made_visible}}},
            {"upload_pages_per_frame", r.upload_pages_per_frame}};
}

nlohmann::json textures_json(const RunReport& r) {
    nlohmann::json textures = nlohmann::json::array();
    for (const SessionTexture& texture : r.textures) {
        textures.push_back({{"id", texture.id},
                            {"name", texture.name},
                            {"width", texture.shape.width},
                            {"height", texture.shape.height},
                            {"pages", texture.pages},
                            {"resident_pages", texture.resident_pages},
                            {"resident_texels", texture.resident_texels}});
    }
    return textures;
}

}  // namespace

RunReport make_report(const ViewerOptions& options, const StreamingSession& session,
                      const FrameStats& stats, double seconds) {
    const SessionCounters counters = session.counters();
    RunReport r;
    r.backend = session.backend_name();
    r.device = session.device_name();
    r.driver = session.context().driver_info();
    r.texture = session.texture_name();
    r.scene = session.scene_box() != nullptr;
    r.reference_textures = options.reference_textures;
    r.lod_from = options.lod_from_device ? "device" : "formula";
    r.scene_geometry_bytes = session.scene_geometry_bytes();
    r.reference_texture_bytes = session.reference_texture_bytes();
    r.scene_stacks = session.scene_stacks();
    r.scene_stacked_slots = session.scene_stacked_slots();
    // The path the run started with: a window over a scene starts with the scene's first.
    r.camera_path = options.camera_path;
    if (r.camera_path.empty()) {
        r.camera_path = r.scene ? camera_paths(View::scene).front().name : "manual";
    }
    r.mode = to_string(options.mode);
    r.width = options.width;
    r.height = options.height;
    r.budget_mib = options.budget_mib;
    r.budget_pages = session.budget_pages();
    r.frames = stats.frames();
    r.presented_frames = stats.presented_frames();
    r.warmup_frames = options.warmup_frames;
    r.seconds = seconds;
    r.startup_seconds = session.startup_seconds();
    r.first_frame_seconds = r.startup_seconds + stats.first_rendered_seconds();
    r.frame_ms = stats.frame_ms();
    r.gpu_ms = stats.gpu_ms();
    r.textured_pass_ms = stats.textured_pass_ms();
    r.render_ms = stats.render_ms();
    r.feedback_ms = stats.feedback_ms();
    r.process_ms = stats.process_ms();
    r.request_ms = stats.request_ms();
    r.complete_ms = stats.complete_ms();
    r.copy_ms = stats.copy_ms();
    r.handoff_ms = stats.handoff_ms();
    r.feedback_coalesced = counters.feedback.coalesced;
    const vt::StreamerStatistics& streamer = counters.streamer;
    r.pages_committed = streamer.table.commits;
    r.pages_evicted = streamer.table.evictions;
    r.pages_streamed = streamer.pages_filled;
    r.bytes_streamed = streamer.bytes_filled;
    r.pages_per_second = seconds > 0 ? double(r.pages_streamed) / seconds : 0;
    r.bytes_per_second = seconds > 0 ? double(r.bytes_streamed) / seconds : 0;
    r.resident_pages = streamer.table.resident_pages;
    r.tail_pages = streamer.tail_pages;
    r.packed_tails = streamer.packed_tails;
    r.level_pages = streamer.level_pages;
    r.packed_levels = streamer.packed_levels;
    r.evicted_levels = streamer.evicted_levels;
    r.released_level_pages = streamer.released_level_pages;
    r.textures = session.texture_residency();
    for (const SessionTexture& texture : r.textures) r.resident_texels += texture.resident_texels;
    r.deferred_pages = streamer.table.deferred_pages;
    r.deferred_peak = streamer.table.deferred_peak;
    r.deferred_total = streamer.table.deferred_total;
    r.pool = streamer.table.pool;
    r.requests = streamer.requests;
    r.dropped_requests = streamer.dropped_requests;
    r.superseded_requests = streamer.superseded_requests;
    r.residency = counters.residency;
    r.budget = counters.budget;
    r.refaulted_pages = streamer.refaulted_pages;
    r.held_pages = streamer.held_pages;
    r.held_requests = streamer.held_requests;
    r.withdrawn_requests = counters.withdrawn_requests;
    r.budget_stalls = streamer.budget_stalls;
    r.failed_pages = streamer.failed_pages;
    r.file_reads = streamer.file_reads;
    r.decode_threads_governed = counters.decode_threads_governed;
    r.decode_governor = counters.decode_governor;
    r.indirection_uploads = counters.indirection.uploads;
    r.indirection_entries = counters.indirection.uploaded_entries;
    r.scattered_uploads = counters.indirection.scattered_uploads;
    r.limited_uploads = counters.indirection.limited_uploads;
    r.latency = counters.latency;
    r.queue_depth = stats.queue_depth();
    r.made_visible = stats.made_visible();
    r.cancelled_requests = streamer.cancelled_requests;
    r.pages_made_visible = counters.pages_made_visible;
    r.most_made_visible = counters.most_made_visible;
    r.upload_pages_per_frame = options.upload_pages_per_frame;
    r.validation = session.context().validation_enabled();
    r.validation_errors = counters.validation.errors;
    r.validation_warnings = counters.validation.warnings;
    r.validation_messages = counters.validation.total();
    r.settle_requested = options.settle;
    r.identity_check = options.identity_check;
    r.identity = counters.identity;
    r.quality = stats.quality();
    r.cuts = stats.closed_cuts();
    r.full_detail = full_detail_figures(r.cuts);
    r.governed = counters.governed;
    r.governor = counters.governor_statistics;
    r.governor_decision = counters.governor;
    if (r.governed) r.governor_timeline = session.governor_timeline();
    r.frame_ms_target = options.frame_ms_target;
    r.pressure_mib = options.pressure_mib;
    r.pressure_leave_free_mib = options.pressure_leave_free_mib;
    r.pressure_at = options.pressure_at;
    r.pressure_for = options.pressure_for;
    return r;
}

nlohmann::json to_json(const RunReport& r) {
    nlohmann::json json = {
        {"backend", r.backend},
        {"device", r.device},
        {"driver", r.driver},
        {"texture", r.texture},
        {"scene",
         {{"drawn", r.scene},
          {"reference_textures", r.reference_textures},
          {"lod_from", r.lod_from},
          {"geometry_bytes", r.scene_geometry_bytes},
          {"reference_texture_bytes", r.reference_texture_bytes},
          {"stacks", r.scene_stacks},
          {"stacked_slots", r.scene_stacked_slots}}},
        {"camera_path", r.camera_path},
        {"mode", r.mode},
        {"width", r.width},
        {"height", r.height},
        {"budget_mib", r.budget_mib},
        {"budget_pages", r.budget_pages},
        {"frames", r.frames},
        {"warmup_frames", r.warmup_frames},
        {"presented_frames", r.presented_frames},
        {"seconds", r.seconds},
        {"startup_seconds", r.startup_seconds},
        {"first_frame_seconds", r.first_frame_seconds},
        {"frame_ms_p50", r.frame_ms.p50},
        {"frame_ms_p90", r.frame_ms.p90},
        {"frame_ms_p99", r.frame_ms.p99},
        {"frame_ms_max", r.frame_ms.max},
        {"frame_ms_mean", r.frame_ms.mean},
        {"frame_ms", percentiles_json(r.frame_ms)},
        {"gpu_ms", percentiles_json(r.gpu_ms)},
        {"textured_pass_ms", percentiles_json(r.textured_pass_ms)},
        {"render_call_ms", percentiles_json(r.render_ms)},
        {"feedback_ms", percentiles_json(r.feedback_ms)},
        {"feedback_copy_ms", percentiles_json(r.copy_ms)},
        {"feedback_thread_ms",
         {{"process", percentiles_json(r.process_ms)},
          {"request", percentiles_json(r.request_ms)},
          {"complete_frame", percentiles_json(r.complete_ms)},
          {"handoff_to_processed", percentiles_json(r.handoff_ms)}}},
        {"feedback_coalesced", r.feedback_coalesced},
        {"pages_committed", r.pages_committed},
        {"pages_evicted", r.pages_evicted},
        {"pages_streamed", r.pages_streamed},
        {"bytes_streamed", r.bytes_streamed},
        {"pages_streamed_per_second", r.pages_per_second},
        {"bytes_streamed_per_second", r.bytes_per_second},
        {"resident_pages", r.resident_pages},
        {"resident_texels", r.resident_texels},
        {"tail_pages", r.tail_pages},
        {"packed_tails", r.packed_tails},
        {"level_pages", r.level_pages},
        {"packed_levels", r.packed_levels},
        {"evicted_levels", r.evicted_levels},
        {"released_level_pages", r.released_level_pages},
        {"deferred_pages",
         {{"now", r.deferred_pages}, {"peak", r.deferred_peak}, {"total", r.deferred_total}}},
        {"pool",
         {{"reserved_bytes", r.pool.reserved_bytes},
          {"reserved_bytes_high", r.pool.reserved_bytes_high},
          {"used_bytes", r.pool.used_bytes},
          {"used_bytes_high", r.pool.used_bytes_high},
          {"hits", r.pool.hits},
          {"misses", r.pool.misses},
          {"creates", r.pool.creates},
          {"releases", r.pool.releases}}},
        {"requests", r.requests},
        {"dropped_requests", r.dropped_requests},
        {"superseded_requests", r.superseded_requests},
        {"over_budget",
         {{"frames", r.budget.frames},
          {"over_budget_frames", r.budget.over_budget_frames},
          {"most_over_budget_pages", r.budget.most_over_budget_pages},
          {"over_budget_pages_last", r.budget.newest.over_budget_pages},
          {"recent_pages_last", r.budget.newest.recent_pages},
          {"free_pages_last", r.budget.newest.free_pages},
          {"sampled_budget_share_mean", r.budget.mean_sampled_budget_share()},
          {"refaulted_pages", r.refaulted_pages},
          {"held_pages", r.held_pages},
          {"held_requests", r.held_requests}}},
        {"residency",
         {{"samples", r.residency.samples},
          {"sampled_share_mean", r.residency.mean_share()},
          {"sampled_share_last", r.residency.newest.sampled_share()},
          {"resident_tiles_last", r.residency.newest.resident_tiles},
          {"sampled_tiles_last", r.residency.newest.sampled_tiles},
          {"asked_tiles_last", r.residency.newest.asked_tiles},
          {"in_use_share_mean", r.residency.mean_in_use_share()},
          {"in_use_share_last", r.residency.newest.in_use_share()},
          {"in_use_tiles_last", r.residency.newest.in_use_tiles},
          {"resident_mib_mean", r.residency.mean_resident_bytes() / double(1 << 20)},
          {"in_use_mib_mean", r.residency.mean_in_use_bytes() / double(1 << 20)},
          {"tile_granular_mib_mean", r.residency.mean_tile_granular_bytes() / double(1 << 20)}}},
        {"withdrawn_requests", r.withdrawn_requests},
        {"budget_stalls", r.budget_stalls},
        {"failed_pages", r.failed_pages},
        {"file_reads",
         {{"pages_loaded", r.file_reads.loaded},
          {"distinct_pages", r.file_reads.distinct_pages},
          {"pages_failed", r.file_reads.failed},
          {"bytes_read", r.file_reads.bytes_read},
          {"read_buffers_peak", r.file_reads.buffers_peak},
          {"reads_peak_in_flight", r.file_reads.reads_peak_in_flight},
          {"page_cache_attempts", r.file_reads.page_cache_attempts},
          {"decode_seconds", r.file_reads.decode_seconds},
          {"decode_parts_helped", r.file_reads.decode_parts_helped},
          {"decoded_page_hits", r.file_reads.decoded_page_hits},
          {"decode_threads", r.file_reads.decode_threads},
          {"active_decode_threads", r.file_reads.active_decode_threads},
          {"lowered_decode_threads", r.file_reads.lowered_decode_threads},
          {"decode_threads_governed", r.decode_threads_governed},
          {"decode_governor",
           {{"trials", r.decode_governor.trials},
            {"kept", r.decode_governor.kept},
            {"taken_back", r.decode_governor.taken_back},
            {"removed", r.decode_governor.removed},
            {"given_back", r.decode_governor.given_back},
            {"surges", r.decode_governor.surges},
            {"measured_target_ms", r.decode_governor.measured_target_ms},
            {"last_pages_per_second", r.decode_governor.last_pages_per_second}}},
          {"read_backend", r.file_reads.backend}}},
        {"indirection",
         {{"uploads", r.indirection_uploads},
          {"entries", r.indirection_entries},
          {"scattered_uploads", r.scattered_uploads},
          {"limited_uploads", r.limited_uploads}}},
        {"latency", latency_json(r)},
        {"validation", r.validation},
        {"validation_errors", r.validation_errors},
        {"validation_warnings", r.validation_warnings},
        {"validation_messages", r.validation_messages},
    };
    json["textures"] = textures_json(r);
    json["quality"] = quality_json(r);
    if (r.settle_requested) json["settled"] = r.settled;
    if (r.identity_check) {
        json["identity_check"] = {{"frames", r.identity.frames},
                                  {"pixels_checked", r.identity.pixels},
                                  {"violations", r.identity.violations},
                                  {"coarser_pixels", r.identity.coarser},
                                  {"frames_with_violations", r.identity.frames_with_violations},
                                  {"first_violating_frame", r.identity.first_violating_frame}};
    }
    if (r.governed) json["governor"] = governor_json(r);
    if (r.pressure_mib > 0 || r.pressure_leave_free_mib > 0) {
        json["pressure"] = {{"mib", r.pressure_mib},
                            {"leave_free_mib", r.pressure_leave_free_mib},
                            {"at_seconds", r.pressure_at},
                            {"for_seconds", r.pressure_for}};
    }
    if (r.goal_applies()) {
        json["goal"] = {{"frame_ms_p99_at_most", goal_p99_ms},
                        {"pages_streamed_per_second_at_least", goal_pages_per_second},
                        {"met", r.goal_met()}};
    }
    return json;
}

namespace {

// "a 3 / 11, b 1 / 3, ...": each texture's resident pages of its pages.
std::string per_texture_pages(const RunReport& r) {
    std::string text;
    for (const SessionTexture& texture : r.textures) {
        text += detail::concat(text.empty() ? "" : ", ", texture.name, " ", texture.resident_pages,
                               " / ", texture.pages);
    }
    return text;
}

}  // namespace

std::string summary_text(const RunReport& r) {
    std::string text;
    auto row = [&](const std::string& what, const std::string& value) {
        text += "| " + what + " | " + value + " |\n";
    };
    text += "| vtpage-viewer | |\n| --- | --- |\n";
    row("backend / device", r.backend + " / " + r.device);
    row("texture", r.texture);
    if (r.scene) {
        row("scene geometry / reference images (MiB)",
            detail::concat(fixed(double(r.scene_geometry_bytes) / (1 << 20), 2), " / ",
                           r.reference_textures
                               ? fixed(double(r.reference_texture_bytes) / (1 << 20), 2)
                               : std::string("not drawn (--reference-textures)")));
        row("scene material stacks (slots in them)",
            detail::concat(r.scene_stacks, " (", r.scene_stacked_slots, ")"));
    }
    row("camera path, size", detail::concat(r.camera_path, ", ", r.width, " x ", r.height));
    row("frames (seconds)", detail::concat(r.frames, " (", fixed(r.seconds, 2), " s, start-up ",
                                           fixed(r.startup_seconds, 2), " s, first frame ",
                                           fixed(r.first_frame_seconds, 2), " s)"));
    row("frame ms p50 / p99 / max", fixed(r.frame_ms.p50, 2) + " / " + fixed(r.frame_ms.p99, 2) +
                                        " / " + fixed(r.frame_ms.max, 2));
    row("GPU ms p50 / p99: frame, textured pass",
        fixed(r.gpu_ms.p50, 2) + " / " + fixed(r.gpu_ms.p99, 2) + ", " +
            fixed(r.textured_pass_ms.p50, 2) + " / " + fixed(r.textured_pass_ms.p99, 2));
    row("render thread ms p50 / p99: render call, feedback hand-off",
        fixed(r.render_ms.p50, 2) + " / " + fixed(r.render_ms.p99, 2) + ", " +
            fixed(r.feedback_ms.p50, 2) + " / " + fixed(r.feedback_ms.p99, 2));
    row("feedback copy ms p99 / max (render thread)",
        fixed(r.copy_ms.p99, 2) + " / " + fixed(r.copy_ms.max, 2));
    row("feedback thread ms p99 / max: process, request, complete frame; hand-off to done",
        fixed(r.process_ms.p99, 2) + " / " + fixed(r.process_ms.max, 2) + ", " +
            fixed(r.request_ms.p99, 2) + " / " + fixed(r.request_ms.max, 2) + ", " +
            fixed(r.complete_ms.p99, 2) + " / " + fixed(r.complete_ms.max, 2) + "; " +
            fixed(r.handoff_ms.p99, 2) + " / " + fixed(r.handoff_ms.max, 2) + " (" +
            std::to_string(r.feedback_coalesced) + " coalesced)");
    text += quality_rows(r);
    if (r.governed) {
        row("governor: budget lowest / last MiB (shrinks, grows)",
            detail::concat(r.governor.lowest_budget_bytes >> 20, " / ",
                           r.governor_decision.budget_bytes >> 20, " (", r.governor.shrinks, ", ",
                           r.governor.grows, ")"));
        row("governor: frames over target, lowest pages per frame, highest bias",
            detail::concat(r.governor.frames_over_target, ", ", r.governor.lowest_publish_limit,
                           ", ", fixed(r.governor.highest_lod_bias, 2)));
    }
    row("pages streamed (per second)",
        detail::concat(r.pages_streamed, " (", fixed(r.pages_per_second, 0), "/s, ",
                       fixed(r.bytes_per_second / mib, 0), " MiB/s)"));
    if (r.file_reads.loaded + r.file_reads.failed > 0) {
        row("pages read from files, distinct and checksummed (stored MiB, reads in flight at most)",
            detail::concat(r.file_reads.loaded, ", ", r.file_reads.distinct_pages, " (",
                           fixed(double(r.file_reads.bytes_read) / mib, 0), " MiB, ",
                           r.file_reads.reads_peak_in_flight, ", ", r.file_reads.backend, ")"));
        row("decode threads: active at the end / started (trials kept, taken back; removed, "
            "given back)",
            detail::concat(
                r.file_reads.active_decode_threads, " / ", r.file_reads.decode_threads,
                r.decode_threads_governed
                    ? detail::concat(" (", r.decode_governor.kept, ", ",
                                     r.decode_governor.taken_back, "; ", r.decode_governor.removed,
                                     ", ", r.decode_governor.given_back, ")")
                    : std::string(" (fixed)")));
    }
    row("pages committed / evicted", detail::concat(r.pages_committed, " / ", r.pages_evicted));
    row("resident / budget pages",
        detail::concat(r.resident_pages, " / ", r.budget_pages, " (",
                       fixed(double(r.resident_texels) / 1e6, 1), " Mtexels)"));
    if (r.textures.size() > 1) row("resident pages per texture", per_texture_pages(r));
    row("mip tails: textures / pages holding them",
        detail::concat(r.tail_pages + r.packed_tails, " / ", r.tail_pages));
    row("coarse levels: resident / pages holding them / evicted",
        detail::concat(r.packed_levels, " / ", r.level_pages, " / ", r.evicted_levels));
    row("held back for frames in flight: now / peak pages",
        detail::concat(r.deferred_pages, " / ", r.deferred_peak));
    row("pool hits / misses", detail::concat(r.pool.hits, " / ", r.pool.misses));
    const ResidencyTotals& residency = r.residency;
    const auto mib = [](double bytes) { return fixed(bytes / double(1 << 20), 0); };
    row("tiles sampled in 8 feedbacks: of the resident / of the pages in use (MiB each; by tile)",
        detail::concat(fixed(100 * residency.mean_share(), 1), "% / ",
                       fixed(100 * residency.mean_in_use_share(), 1), "% (",
                       mib(residency.mean_resident_bytes()), " / ",
                       mib(residency.mean_in_use_bytes()), "; ",
                       mib(residency.mean_tile_granular_bytes()), ")"));
    row("over budget: frames / most pages / free pages held by sampled ones; refaults (held)",
        detail::concat(r.budget.over_budget_frames, " of ", r.budget.frames, " / ",
                       r.budget.most_over_budget_pages, " / ",
                       fixed(100 * r.budget.mean_sampled_budget_share(), 1), "%; ",
                       r.refaulted_pages, " (", r.held_pages, ")"));
    row("requests (dropped, withdrawn, superseded levels)",
        detail::concat(r.requests, " (", r.dropped_requests, ", ", r.withdrawn_requests, ", ",
                       r.superseded_requests, ")"));
    const vt::RequestLatencyStatistics& l = r.latency;
    row("request to visible: frames p50 / p99 / max, ms p50 / p99 / max (pages)",
        detail::concat(l.frames_p50, " / ", l.frames_p99, " / ", l.frames_max, ", ",
                       fixed(l.ms_p50, 1), " / ", fixed(l.ms_p99, 1), " / ", fixed(l.ms_max, 1),
                       " (", l.samples, ")"));
    row("queue depth p50 / max; cancelled requests; dropped before visible",
        detail::concat(fixed(r.queue_depth.p50, 0), " / ", fixed(r.queue_depth.max, 0), "; ",
                       r.cancelled_requests, "; ", l.dropped));
    row("pages made visible per frame p50 / max (limit)",
        detail::concat(fixed(r.made_visible.p50, 0), " / ", r.most_made_visible, " (",
                       r.upload_pages_per_frame ? std::to_string(r.upload_pages_per_frame)
                                                : std::string("none"),
                       ")"));
    row("indirection uploads (scattered)",
        detail::concat(r.indirection_uploads, " (", r.scattered_uploads, ")"));
    row("validation messages",
        r.validation ? detail::concat(r.validation_messages, " (", r.validation_errors, " errors, ",
                                      r.validation_warnings, " warnings)")
                     : std::string("off"));
    if (r.settle_requested) row("settled", r.settled ? "yes" : "no");
    if (r.identity_check) {
        row("identity check: violations / pixels checked (frames, coarser pixels)",
            detail::concat(r.identity.violations, " / ", r.identity.pixels, " (", r.identity.frames,
                           ", ", r.identity.coarser, ")"));
    }
    if (r.goal_applies()) {
        text += detail::concat(
            "goal p99 <= ", fixed(goal_p99_ms, 1), " ms at >= ", fixed(goal_pages_per_second, 0),
            " pages/s: ", r.goal_met() ? "met" : "not met", " (p99 ", fixed(r.frame_ms.p99, 2),
            " ms, ", fixed(r.pages_per_second, 0), " pages/s)\n");
    }
    return text;
}

}  // namespace vtpage::viewer
