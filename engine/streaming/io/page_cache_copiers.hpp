// Threads that copy reads whose bytes are all in the page cache (preadv2 with RWF_NOWAIT), for
// the io_uring backend: a burst of cached reads is copied on several cores at once rather than
// one after another on the ring's thread (on an H200 machine each copy took 0.1 to 0.5 ms, and
// the last read of a 21-page burst ended 3.7 ms after the first). A read not all in the page
// cache comes back as a miss, for the ring.
//
//   PageCacheCopiers copiers(4, [&] { wake the owner });
//   copiers.post({slot, fd, offset, destination, bytes});   // the destination stays valid
//   ... once woken:  for (const auto& result : copiers.take_results()) ...
//
// One lock guards both queues; the copies run without it. The owner's wake is called after each
// result is queued, with no lock held.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace vtpage::vt {

class PageCacheCopiers {
public:
    struct Job {
        std::size_t slot = 0;  // the owner's, handed back in the result
        int fd = -1;
        std::uint64_t offset = 0;
        std::byte* destination = nullptr;
        std::size_t bytes = 0;
    };
    struct Result {
        std::size_t slot = 0;
        bool copied = false;  // every byte was in the page cache and is in the destination
    };

    // At least one thread. Throws Error (backend_failure) when a thread cannot start.
    PageCacheCopiers(std::size_t threads, std::function<void()> wake);
    // Copies the jobs posted, then joins the threads.
    ~PageCacheCopiers();
    PageCacheCopiers(const PageCacheCopiers&) = delete;
    PageCacheCopiers& operator=(const PageCacheCopiers&) = delete;

    void post(const Job& job);
    // The results there are, oldest first, without waiting.
    std::vector<Result> take_results();
    // As take_results, but waits for one while jobs are out; empty when none are.
    std::vector<Result> wait_results();

private:
    void run();
    static bool copy(const Job& job);

    std::function<void()> wake_;
    std::mutex mutex_;
    std::condition_variable work_;  // a job posted, or stopping
    std::condition_variable done_;  // a result queued
    std::deque<Job> jobs_;
    std::vector<Result> results_;
    std::size_t out_ = 0;  // posted, result not yet taken
    bool stopping_ = false;
    std::vector<std::thread> threads_;  // last: start once everything above exists
};

}  // namespace vtpage::vt
