// How many decode threads the page loader starts (the pool) and how many of them take pages at
// first (StreamerFileReads::decode_threads).
#pragma once

#include <cstddef>

#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::vt::streamer_detail {

struct DecodeThreadCounts {
    std::size_t pool = 1;
    std::size_t active = 1;
    bool automatic = false;  // the active count may follow the frames (DecodeThreadGovernor)
};

// decode_threads > 0: that many, all active. 0: a thread for each usable CPU but one (the app's
// render thread keeps it), at most one per read buffer (a thread more would never have a page),
// at least one; at the normal priority half the usable CPUs active at first, at least 2, within
// the pool; at a lowered one (the app's threads preempt them) the whole pool.
DecodeThreadCounts decode_thread_counts(const StreamerFileReads& reads, std::size_t usable_cpus);

}  // namespace vtpage::vt::streamer_detail
