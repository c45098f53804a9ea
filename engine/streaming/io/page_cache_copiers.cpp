#include "streaming/io/page_cache_copiers.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <system_error>
#include <utility>

#include "base/test_points.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt {

PageCacheCopiers::PageCacheCopiers(std::size_t threads, std::function<void()> wake)
    : wake_(std::move(wake)) {
    try {
        for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) {
            threads_.emplace_back([this] { run(); });
        }
    } catch (const std::system_error& error) {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        work_.notify_all();
        for (std::thread& thread : threads_) thread.join();
        throw Error(Errc::backend_failure, "FileReadQueue", "cannot start a page cache copier", {},
                    error.code().value(), errno_name(error.code().value()));
    }
}

PageCacheCopiers::~PageCacheCopiers() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_.notify_all();
    for (std::thread& thread : threads_) thread.join();
}

void PageCacheCopiers::post(const Job& job) {
    {
        std::lock_guard lock(mutex_);
        jobs_.push_back(job);
        ++out_;
    }
    work_.notify_one();
}

std::vector<PageCacheCopiers::Result> PageCacheCopiers::take_results() {
    std::lock_guard lock(mutex_);
    out_ -= results_.size();
    return std::exchange(results_, {});
}

std::vector<PageCacheCopiers::Result> PageCacheCopiers::wait_results() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return !results_.empty() || out_ == 0; });
    out_ -= results_.size();
    return std::exchange(results_, {});
}

void PageCacheCopiers::run() {
    trace::name_thread("vtpage page cache copier");
    std::unique_lock lock(mutex_);
    for (;;) {
        work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and every job copied
        const Job job = jobs_.front();
        jobs_.pop_front();
        lock.unlock();
        VTPAGE_TEST_POINT("read.page_cache_copy");
        const bool copied = [&] {
            VTPAGE_TRACE_SCOPE("io", "page cache copy", .count = job.bytes);
            return copy(job);
        }();
        lock.lock();
        results_.push_back({job.slot, copied});
        done_.notify_all();
        lock.unlock();
        if (wake_) wake_();
        lock.lock();
    }
}

// All of it or nothing: a miss, a short copy or an error goes back to the ring, which reads
// it as any other.
bool PageCacheCopiers::copy(const Job& job) {
    iovec destination{job.destination, job.bytes};
    const ssize_t result = ::preadv2(job.fd, &destination, 1, off_t(job.offset), RWF_NOWAIT);
    return result == ssize_t(job.bytes);
}

}  // namespace vtpage::vt
