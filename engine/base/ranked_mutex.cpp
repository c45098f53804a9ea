#include "base/ranked_mutex.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace vtpage::detail {

namespace {
// The ranked mutexes the calling thread holds, in the order it took them.
thread_local std::vector<const RankedMutex*> held_by_this_thread;
}  // namespace

void RankedMutex::check_order() const {
    for (const RankedMutex* held : held_by_this_thread) {
        if (held->rank() < rank_) continue;
        // A checking build only: the order is broken, and a deadlock is one schedule away.
        std::fprintf(stderr,
                     "vtpage lock order violated: taking %s (rank %d) while holding %s (rank %d)\n",
                     name_, int(rank_), held->name(), int(held->rank()));
        std::abort();
    }
}

void RankedMutex::note_held() const { held_by_this_thread.push_back(this); }

void RankedMutex::note_released() const {
    auto& held = held_by_this_thread;
    auto found = std::find(held.rbegin(), held.rend(), this);
    if (found != held.rend()) held.erase(std::next(found).base());
}

}  // namespace vtpage::detail
