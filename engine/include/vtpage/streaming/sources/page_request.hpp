// A request for a page of a virtual texture, as the feedback makes it and the streamer takes it.
#pragma once

#include <cstdint>

#include "vtpage/streaming/sources/texture_set.hpp"

namespace vtpage::vt {

struct PageRequest {
    PageIndex page = 0;  // global page
    TextureId texture = 0;
    std::uint32_t mip = 0;
    std::uint32_t count = 0;  // samples that asked for this page or a page below it
    friend bool operator==(const PageRequest&, const PageRequest&) = default;
};

// The priority order of requests: coarse first, then count, then page (deterministic).
bool higher_priority(const PageRequest& a, const PageRequest& b) noexcept;

}  // namespace vtpage::vt
