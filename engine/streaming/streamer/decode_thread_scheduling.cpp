#include "streaming/streamer/decode_thread_scheduling.hpp"

#include <cerrno>

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage::vt::streamer_detail {

namespace {

// How much nicer than the app a low-priority decode thread is: at +10 a thread has a tenth of
// a nice-0 thread's share of a contended core.
constexpr int low_nice_step = 10;
constexpr int nicest = 19;

}  // namespace

std::string lower_this_thread(DecodeThreadPriority priority) {
    if (priority == DecodeThreadPriority::normal) return {};
#if defined(__linux__)
    // On Linux the scheduling calls with id 0 act on the calling thread, not its process.
    const sched_param param{};
    const int policy = priority == DecodeThreadPriority::idle ? SCHED_IDLE : SCHED_BATCH;
    if (::sched_setscheduler(0, policy, &param) != 0) {
        return detail::concat("sched_setscheduler: ", errno_name(errno));
    }
    if (priority == DecodeThreadPriority::low) {
        errno = 0;
        const int nice = ::getpriority(PRIO_PROCESS, 0);
        if (errno != 0) return detail::concat("getpriority: ", errno_name(errno));
        const int lowered = nice + low_nice_step < nicest ? nice + low_nice_step : nicest;
        if (::setpriority(PRIO_PROCESS, 0, lowered) != 0) {
            return detail::concat("setpriority: ", errno_name(errno));
        }
    }
    return {};
#else
    return "lowering a thread's priority is built for Linux only";
#endif
}

}  // namespace vtpage::vt::streamer_detail
