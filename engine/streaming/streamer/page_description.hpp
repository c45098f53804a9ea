// A committed page as the streamer's events and ready pages describe it: its mapping, where its
// bytes are (region or window) and which texture, mip and layout page it is.
#pragma once

#include "vtpage/core/page_table.hpp"
#include "vtpage/streaming/sources/texture_set.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

StreamedPage describe_page(const PageTable& table, const TextureSet& textures,
                           const PageMapping& mapping);

}  // namespace vtpage::vt::streamer_detail
