// Lowers the calling thread's scheduling priority to a decode thread's (StreamerFileReads::
// decode_priority).
#pragma once

#include <string>

#include "vtpage/streaming/streamer/decode_thread_priority.hpp"

namespace vtpage::vt::streamer_detail {

// Applies `priority` to the calling thread only. An empty string when done (or nothing to do);
// otherwise why not, and the thread keeps the priority it had: the pages are still decoded.
std::string lower_this_thread(DecodeThreadPriority priority);

}  // namespace vtpage::vt::streamer_detail
