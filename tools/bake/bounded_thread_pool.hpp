// A few worker threads and a bounded queue of jobs: submit() blocks while the queue is full, so
// that a producer faster than the workers (the pyramid's bands, against tile encoding) holds at
// most `capacity` jobs in memory.
//
// The first job that throws stops the pool: later jobs are dropped, and submit() or finish()
// rethrows that exception in the caller's thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vtpage::bake {

class BoundedThreadPool {
public:
    // threads 0: one per core. capacity 0: twice the threads.
    explicit BoundedThreadPool(unsigned threads = 0, std::size_t capacity = 0);
    // Drops the jobs not started and joins the workers.
    ~BoundedThreadPool();
    BoundedThreadPool(const BoundedThreadPool&) = delete;
    BoundedThreadPool& operator=(const BoundedThreadPool&) = delete;

    unsigned threads() const noexcept { return unsigned(workers_.size()); }
    void submit(std::function<void()> job);
    // Waits until every job submitted has run; rethrows the first job's exception.
    void finish();

private:
    void work();
    void rethrow_failure();  // with mutex_ held

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::function<void()>> jobs_;
    std::size_t capacity_;
    std::size_t running_ = 0;
    bool stopping_ = false;
    std::exception_ptr failure_;
    std::vector<std::thread> workers_;
};

}  // namespace vtpage::bake
