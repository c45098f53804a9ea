// Burns CPU time on the calling thread, for tests of what measures it.
#pragma once

#include <time.h>

#include <cstdint>

namespace vtpage::test {

inline double this_thread_cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

// Spins until this thread has spent `cpu_seconds` of CPU time (not wall time: a busy machine
// only makes it take longer).
inline void spin_this_thread_for(double cpu_seconds) {
    const double start = this_thread_cpu_seconds();
    volatile std::uint64_t spins = 0;
    while (this_thread_cpu_seconds() - start < cpu_seconds) spins = spins + 1;
}

}  // namespace vtpage::test
