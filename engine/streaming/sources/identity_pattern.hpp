// The identity texture's texels: each 32-bit texel is a hash of its own (texture, page, texel)
// identity, the page being the texture's layout page (which names the mip and the page's place
// in it). A reader that knows which page its coordinates map to can tell whether the bytes it
// read are that page's, or another page's that took its physical page too early. Integer
// arithmetic only, so the CPU, CUDA and a shader port compute the same words.
#pragma once

#include <cstdint>

#include "streaming/sources/mix32.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"

namespace vtpage::vt::identity {

// What every word of one page starts from: a hash of (texture, page). Apart from the per-word
// step so that a fill computes it once per page.
VTPAGE_HOST_DEVICE constexpr std::uint32_t page_seed(std::uint32_t texture, std::uint64_t page) {
    std::uint32_t h = mix32(texture * 0x9e3779b9u + 0x632be5abu);
    h = mix32(h ^ std::uint32_t(page));
    return mix32(h ^ std::uint32_t(page >> 32));
}

VTPAGE_HOST_DEVICE constexpr std::uint32_t seeded_word(std::uint32_t seed, std::uint32_t texel) {
    return mix32(seed ^ texel);
}

// The word at `texel` (the 32-bit word index within the page) of layout page `page` of the
// texture tagged `texture`. The word index names the tile and the texel in it (word =
// tile_in_page * 128 * 128 + y * 128 + x for RGBA8), and the layout page names the mip and the
// page's place in it: each word is a hash of its (texture, mip, tile, texel).
VTPAGE_HOST_DEVICE constexpr std::uint32_t texel_word(std::uint32_t texture, std::uint64_t page,
                                                      std::uint32_t texel) {
    return seeded_word(page_seed(texture, page), texel);
}

inline constexpr std::uint32_t words_per_page = std::uint32_t(page_bytes / 4);

}  // namespace vtpage::vt::identity
