// What the streamer's constructor checks in its settings, and the pages they give packed
// coarse levels.
#pragma once

#include <cstddef>

#include "vtpage/backend/backend.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

// Refuses settings under which the streamer could not reach or hold its pages (invalid_argument,
// not_supported).
void check_streamer_settings(Backend& backend, const StreamerSettings& settings);
// The pages named past the textures' region for packed levels: packed_level_pages, by default
// a quarter of the largest budget (the pool's windows); 0 without packing.
std::size_t level_host_names(const StreamerSettings& settings);

}  // namespace vtpage::vt::streamer_detail
