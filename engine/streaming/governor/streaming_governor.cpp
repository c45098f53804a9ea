#include "vtpage/streaming/governor/streaming_governor.hpp"

#include <algorithm>
#include <cmath>

#include "vtpage/base/error.hpp"

namespace vtpage::vt {

namespace {

void check(bool valid, const char* what) {
    if (!valid) throw Error(Errc::invalid_argument, "StreamingGovernor", what);
}

void check_settings(const StreamingGovernorSettings& s) {
    check(std::isfinite(s.frame_ms_target) && s.frame_ms_target >= 0 && s.frame_ms_target <= 60000,
          "frame_ms_target must be a number of milliseconds from 0 to 60000");
    check(s.page_bytes > 0, "page_bytes must not be 0");
    check(s.min_budget_bytes >= s.page_bytes && s.min_budget_bytes <= s.max_budget_bytes,
          "the budget range must hold at least a page and min_budget_bytes <= max_budget_bytes");
    check(s.min_budget_bytes % s.page_bytes == 0 && s.max_budget_bytes % s.page_bytes == 0,
          "the budget range must be whole pages");
    check(s.step_pages > 0 && s.grow_after_frames > 0 && s.calm_frames > 0,
          "step_pages, grow_after_frames and calm_frames must not be 0");
    check(s.min_pages_per_frame > 0 && s.min_pages_per_frame <= s.max_pages_per_frame,
          "pages per frame: 0 < min_pages_per_frame <= max_pages_per_frame");
    check(std::isfinite(s.max_lod_bias) && s.max_lod_bias >= 0 && s.max_lod_bias <= 16 &&
              std::isfinite(s.lod_bias_step) && s.lod_bias_step > 0,
          "the bias range must be finite: 0 <= max_lod_bias <= 16, lod_bias_step > 0");
}

}  // namespace

StreamingGovernor::StreamingGovernor(StreamingGovernorSettings settings) : settings_(settings) {
    check_settings(settings_);
    decision_.budget_bytes = settings_.max_budget_bytes;
    if (settings_.frame_ms_target > 0) decision_.publish_limit = settings_.max_pages_per_frame;
    statistics_.lowest_budget_bytes = decision_.budget_bytes;
    statistics_.lowest_publish_limit = decision_.publish_limit;
}

GovernorDecision StreamingGovernor::update(const GovernorInput& input) {
    ++statistics_.frames;
    if (settings_.headroom_bytes > 0) follow_memory(input);
    const std::size_t budget_pages = decision_.budget_bytes / settings_.page_bytes;
    const std::size_t held_pages = input.held_bytes / settings_.page_bytes;
    decision_.evict_pages =
        held_pages > budget_pages ? std::min(settings_.step_pages, held_pages - budget_pages) : 0;
    if (settings_.frame_ms_target > 0 && std::isfinite(input.frame_ms) && input.frame_ms >= 0) {
        follow_frame_time(input.frame_ms);
    }
    statistics_.lowest_budget_bytes =
        std::min(statistics_.lowest_budget_bytes, decision_.budget_bytes);
    statistics_.lowest_publish_limit =
        std::min(statistics_.lowest_publish_limit, decision_.publish_limit);
    statistics_.highest_lod_bias = std::max(statistics_.highest_lod_bias, decision_.lod_bias);
    return decision_;
}

// Below the headroom: give back the shortfall at once (as a budget; the pages leave a step a
// frame). Above it by a step, for long enough, with the budget in use: take a step back.
void StreamingGovernor::follow_memory(const GovernorInput& input) {
    const std::size_t page = settings_.page_bytes;
    const std::size_t step = settings_.step_pages * page;
    if (input.device_free_bytes < settings_.headroom_bytes) {
        roomy_frames_ = 0;
        const std::size_t shortfall = settings_.headroom_bytes - input.device_free_bytes;
        // Pages still on their way out are in held_bytes and not yet in the free memory: the
        // same target again, not a lower one.
        const std::size_t held = input.held_bytes;
        const std::size_t wanted = held > shortfall ? (held - shortfall) / page * page : 0;
        const std::size_t budget = std::max(wanted, settings_.min_budget_bytes);
        if (budget < decision_.budget_bytes) {
            decision_.budget_bytes = budget;
            ++statistics_.shrinks;
        }
        return;
    }
    const bool roomy = input.device_free_bytes >= settings_.headroom_bytes + step;
    roomy_frames_ = roomy ? roomy_frames_ + 1 : 0;
    const bool in_use = input.held_bytes + step >= decision_.budget_bytes;
    if (roomy_frames_ < settings_.grow_after_frames || !in_use ||
        decision_.budget_bytes >= settings_.max_budget_bytes) {
        return;
    }
    decision_.budget_bytes = std::min(settings_.max_budget_bytes, decision_.budget_bytes + step);
    ++statistics_.grows;
    roomy_frames_ = 0;
}

void StreamingGovernor::follow_frame_time(double frame_ms) {
    if (frame_ms > settings_.frame_ms_target) {
        ++statistics_.frames_over_target;
        calm_frames_ = 0;
        if (decision_.publish_limit > settings_.min_pages_per_frame) {
            decision_.publish_limit =
                std::max(settings_.min_pages_per_frame, decision_.publish_limit / 2);
        } else {
            decision_.lod_bias =
                std::min(settings_.max_lod_bias, decision_.lod_bias + settings_.lod_bias_step);
        }
        return;
    }
    if (frame_ms >= 0.8 * settings_.frame_ms_target) {
        calm_frames_ = 0;
        return;
    }
    if (++calm_frames_ < settings_.calm_frames) return;
    calm_frames_ = 0;
    if (decision_.lod_bias > 0) {
        decision_.lod_bias = std::max(0.0f, decision_.lod_bias - settings_.lod_bias_step);
    } else {
        const std::size_t increase = std::max<std::size_t>(1, settings_.max_pages_per_frame / 16);
        decision_.publish_limit =
            std::min(settings_.max_pages_per_frame, decision_.publish_limit + increase);
    }
}

}  // namespace vtpage::vt
