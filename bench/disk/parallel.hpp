// Runs one function on several threads at once and hands back the first exception any of them
// threw (the others run to their end: each checks `stop` to end early).
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vtpage::bench::disk {

// work(thread index, stop) on `threads` threads, the calling thread among them.
inline void run_parallel(std::size_t threads,
                         const std::function<void(std::size_t, const std::atomic<bool>&)>& work) {
    std::atomic<bool> stop{false};
    std::exception_ptr first;
    std::mutex mutex;
    auto guarded = [&](std::size_t index) {
        try {
            work(index, stop);
        } catch (...) {
            const std::lock_guard lock(mutex);
            if (!first) first = std::current_exception();
            stop = true;
        }
    };
    std::vector<std::jthread> pool;
    for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(guarded, i);
    guarded(0);
    pool.clear();  // joins
    if (first) std::rethrow_exception(first);
}

}  // namespace vtpage::bench::disk
