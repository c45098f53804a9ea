// StreamerFileReads::decode_priority: how the decode threads are scheduled.
#pragma once

#include <cstdint>

namespace vtpage::vt {

// How the decode threads are scheduled against the app's own threads (Linux; elsewhere they
// run as any thread). A decode thread that holds a core the app's render thread wakes up for
// delays its frame: lowered, the render thread takes the core at once, and the decode threads
// get what the app leaves.
enum class DecodeThreadPriority : std::uint8_t {
    normal,  // as the app's threads
    low,     // SCHED_BATCH at nice +10: the app's threads take a core from them when they wake
    idle,    // SCHED_IDLE: only cores that no other thread of the machine wants
};

}  // namespace vtpage::vt
