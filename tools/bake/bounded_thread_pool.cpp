#include "bounded_thread_pool.hpp"

#include <algorithm>

namespace vtpage::bake {

BoundedThreadPool::BoundedThreadPool(unsigned threads, std::size_t capacity) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    capacity_ = capacity == 0 ? 2 * std::size_t(threads) : capacity;
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

BoundedThreadPool::~BoundedThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        jobs_.clear();
    }
    changed_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

void BoundedThreadPool::rethrow_failure() {
    if (failure_) std::rethrow_exception(failure_);
}

void BoundedThreadPool::submit(std::function<void()> job) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return jobs_.size() < capacity_ || failure_; });
    rethrow_failure();
    jobs_.push_back(std::move(job));
    lock.unlock();
    changed_.notify_all();
}

void BoundedThreadPool::finish() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return (jobs_.empty() && running_ == 0) || failure_; });
    rethrow_failure();
}

void BoundedThreadPool::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        std::function<void()> job = std::move(jobs_.front());
        jobs_.pop_front();
        ++running_;
        lock.unlock();
        changed_.notify_all();  // room in the queue
        std::exception_ptr thrown;
        try {
            job();
        } catch (...) {
            thrown = std::current_exception();
        }
        lock.lock();
        --running_;
        if (thrown && !failure_) {
            failure_ = thrown;
            jobs_.clear();
        }
        changed_.notify_all();
    }
}

}  // namespace vtpage::bake
