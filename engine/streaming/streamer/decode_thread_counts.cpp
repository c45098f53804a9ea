#include "streaming/streamer/decode_thread_counts.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

DecodeThreadCounts decode_thread_counts(const StreamerFileReads& reads, std::size_t usable_cpus) {
    if (reads.decode_threads > 0) {
        return {.pool = reads.decode_threads, .active = reads.decode_threads, .automatic = false};
    }
    const std::size_t cpus = std::max<std::size_t>(1, usable_cpus);
    const std::size_t pool =
        std::clamp<std::size_t>(cpus - 1, 1, std::max<std::size_t>(1, reads.read_buffers));
    if (reads.decode_priority != DecodeThreadPriority::normal) {
        return {.pool = pool, .active = pool, .automatic = true};
    }
    const std::size_t active = std::min(pool, std::max<std::size_t>(2, cpus / 2));
    return {.pool = pool, .active = active, .automatic = true};
}

}  // namespace vtpage::vt::streamer_detail
