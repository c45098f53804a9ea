// The io_uring backend: one ring of depth read slots and one thread that fills free slots with
// reads from the scheduler, submits them and reaps their completions. A buffered read goes first
// to the page cache copiers (page_cache_copiers.hpp), which copy it on several threads when all
// of it is cached; only a miss goes to the ring. New requests and copied reads wake the thread
// through an eventfd whose read is always armed in the ring, so that it waits in one place (the
// kernel) for all of them. Layer decisions apply to what goes to the kernel (a shortened
// length) and to what comes back (a failure replaces the kernel's result), so faults test this
// code as they test the threads backend.
#include <fcntl.h>
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "streaming/io/file_read_engine.hpp"
#include "streaming/io/page_cache_copiers.hpp"
#include "streaming/io/usable_cpus.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/trace.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage::vt {

namespace {

constexpr std::uint64_t wake_data = ~std::uint64_t(0);

// liburing maps a ring with system calls that ThreadSanitizer does not see, so a new ring can
// take the address of one that another thread used and freed, unordered for it (the kernel
// orders them). Each ring's end is released here and each new ring acquires it.
std::atomic<std::uint64_t> rings_ended{0};

class UringReadEngine : public FileReadEngine,
                        public std::enable_shared_from_this<UringReadEngine> {
public:
    UringReadEngine(std::shared_ptr<ReadScheduler> scheduler, FileLayer& layer, std::size_t depth,
                    std::size_t copiers)
        : scheduler_(std::move(scheduler)), layer_(layer), slots_(depth), copier_threads_(copiers) {
        rings_ended.load(std::memory_order_acquire);
        // One entry more than the slots: the eventfd read.
        const int result = io_uring_queue_init(unsigned(depth + 1), &ring_, 0);
        if (result < 0) {
            throw Error(Errc::not_supported, "FileReadQueue",
                        detail::concat("io_uring_queue_init failed: ", errno_message(-result)),
                        detail::concat("depth=", depth), -result, errno_name(-result));
        }
        wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
        if (!wake_fd_) {
            const int error = errno;
            io_uring_queue_exit(&ring_);
            throw_errno_value(error, Errc::backend_failure, "FileReadQueue", "eventfd failed");
        }
        for (std::size_t i = depth; i > 0; --i) free_.push_back(i - 1);
        copying_.assign(depth, false);
    }

    ~UringReadEngine() override {
        scheduler_->set_wake({});
        io_uring_queue_exit(&ring_);
        rings_ended.fetch_add(1, std::memory_order_release);
    }

    void start() {
        scheduler_->set_wake(waker());
        try {
            thread_ = std::thread([self = shared_from_this()] { self->run(); });
        } catch (const std::system_error& error) {
            scheduler_->set_wake({});
            throw Error(Errc::backend_failure, "FileReadQueue", "cannot start the ring's thread",
                        {}, error.code().value(), errno_name(error.code().value()));
        }
    }

    // Wakes the ring's thread from any thread: the eventfd's read, armed in the ring, completes.
    std::function<void()> waker() const {
        return [fd = wake_fd_.get()] {
            const std::uint64_t one = 1;
            [[maybe_unused]] const ssize_t written = ::write(fd, &one, sizeof(one));
        };
    }

    bool stop(std::chrono::steady_clock::time_point deadline) override {
        const bool idle = scheduler_->wait_idle(deadline);
        if (idle) {
            thread_.join();
        } else {
            thread_.detach();  // it holds the engine: the ring goes when its reads are done
        }
        return idle;
    }

private:
    struct Slot {
        IssuedRead read;
        ReadAttempt attempt;
        ReadDecision decision;
    };

    void run() {
        trace::name_thread("vtpage io_uring");
        start_copiers();
        arm_wake();
        while (broken_ == 0) {
            if (copiers_) take_copies(copiers_->take_results());
            fill();
            submit();
            if (free_.size() == slots_.size() && scheduler_->stopping()) break;
            if (broken_ == 0) reap();
        }
        // A broken ring: the copies out end first (their destinations are in use until then).
        while (broken_ != 0 && copiers_) {
            const std::vector<PageCacheCopiers::Result> results = copiers_->wait_results();
            if (results.empty()) break;
            take_copies(results);
        }
        copiers_.reset();
        if (broken_ == 0) return;
        // The ring is not touched again: what its completions would say is lost. The slots keep
        // their reads (and what those keep alive): the kernel may still write into them.
        while (std::optional<IssuedRead> read = scheduler_->next(true)) fail(*read, broken_);
    }

    // Made and joined on this thread: nothing but it posts to them or takes from them. By
    // default a few threads, never more than a quarter of the CPUs: they copy memory, and the
    // decode threads need the rest. Where none can start, the ring reads everything.
    void start_copiers() {
        const std::size_t threads = copier_threads_ != 0
                                        ? copier_threads_
                                        : std::clamp<std::size_t>(usable_cpus() / 4, 1, 4);
        try {
            copiers_.emplace(threads, waker());
        } catch (...) {  // a thread that cannot start, or no memory for it
            copiers_.reset();
        }
    }

    void fill() {
        while (!free_.empty()) {
            std::optional<IssuedRead> read = scheduler_->next(false);
            if (!read) return;
            const std::size_t index = free_.back();
            free_.pop_back();
            slots_[index].read = std::move(*read);
            start_attempt(index);
        }
    }

    void start_attempt(std::size_t index) {
        Slot& slot = slots_[index];
        slot.attempt = slot.read.attempt();
        slot.decision = layer_.decide(slot.attempt);
        const std::size_t bytes = attempt_bytes(slot.attempt, slot.decision);
        if (copiers_ && may_be_cached(slot, bytes)) {
            copying_[index] = true;
            copiers_->post(
                {index, slot.attempt.fd, slot.attempt.offset, slot.read.next_destination(), bytes});
            return;
        }
        queue_in_ring(index);
    }

    void queue_in_ring(std::size_t index) {
        Slot& slot = slots_[index];
        const std::size_t bytes = attempt_bytes(slot.attempt, slot.decision);
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);  // depth + 1 entries: never null here
        io_uring_prep_read(sqe, slot.attempt.fd, slot.read.next_destination(), unsigned(bytes),
                           slot.attempt.offset);
        io_uring_sqe_set_data64(sqe, index);
        ++unsubmitted_;
    }

    // A buffered read whose bytes may all be in the page cache goes to the copiers: the ring
    // hands a buffered read that cannot complete without waiting to its own worker threads,
    // and on an H200 machine a burst of such reads took 3 to 13 ms where pread took 0.1 to
    // 2.5 (docs/streaming.md). O_DIRECT reads always go to the ring (a synchronous one would
    // stall a copier for the device), as do attempts the layer fails.
    static bool may_be_cached(const Slot& slot, std::size_t bytes) {
        if (slot.decision.action == ReadDecision::Action::fail || bytes == 0) return false;
        const int flags = ::fcntl(slot.attempt.fd, F_GETFL);
        return flags >= 0 && (flags & O_DIRECT) == 0;
    }

    // What the copiers did: a copied attempt ends as the ring's would; a miss goes to the ring.
    void take_copies(const std::vector<PageCacheCopiers::Result>& results) {
        for (const PageCacheCopiers::Result& result : results) {
            copying_[result.slot] = false;
            if (broken_ != 0) {
                finish_failed(result.slot, broken_);
            } else if (result.copied) {
                Slot& slot = slots_[result.slot];
                ++slot.read.page_cache_attempts;
                handle(result.slot, int(attempt_bytes(slot.attempt, slot.decision)));
            } else {
                queue_in_ring(result.slot);
            }
        }
    }

    void arm_wake() {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        io_uring_prep_read(sqe, wake_fd_.get(), &wake_count_, sizeof(wake_count_), 0);
        io_uring_sqe_set_data64(sqe, wake_data);
        ++unsubmitted_;
    }

    void submit() {
        while (unsubmitted_ > 0 && broken_ == 0) {
            const int result = io_uring_submit(&ring_);
            if (result >= 0) {
                unsubmitted_ -= std::min<std::size_t>(unsubmitted_, std::size_t(result));
            } else if (result != -EINTR && result != -EAGAIN && result != -EBUSY) {
                break_ring(-result);
            } else {
                return;  // resubmitted after the next reap
            }
        }
    }

    void reap() {
        io_uring_cqe* cqe = nullptr;
        const int result = io_uring_wait_cqe(&ring_, &cqe);
        if (result == -EINTR || result == -EAGAIN) return;
        if (result < 0) return break_ring(-result);
        unsigned head = 0;
        unsigned seen = 0;
        io_uring_for_each_cqe(&ring_, head, cqe) {
            handle(io_uring_cqe_get_data64(cqe), cqe->res);
            ++seen;
        }
        io_uring_cq_advance(&ring_, seen);
    }

    void handle(std::uint64_t data, int kernel_result) {
        if (data == wake_data) return arm_wake();
        Slot& slot = slots_[data];
        std::int64_t result = layer_.kernel_result(slot.attempt, kernel_result);
        if (slot.decision.action == ReadDecision::Action::fail) result = -slot.decision.error;
        if (apply_attempt_result(slot.read, result) == AttemptOutcome::again) {
            return start_attempt(data);
        }
        scheduler_->finish(std::move(slot.read));
        slot.read = {};  // the kernel is done with it: what it kept alive may go
        free_.push_back(data);
    }

    // io_uring_enter failing for good (a seccomp filter, say) leaves no way to learn what the
    // kernel did: every read in a slot, and every read after, fails with its errno. The kernel
    // may still write into those destinations; this is the price of never hanging.
    void break_ring(int error) {
        broken_ = error;
        unsubmitted_ = 0;
        for (std::size_t index = 0; index < slots_.size(); ++index) {
            const bool used = std::find(free_.begin(), free_.end(), index) == free_.end();
            if (used && !copying_[index]) finish_failed(index, error);  // copies end first
        }
    }

    void finish_failed(std::size_t index, int error) {
        fail(slots_[index].read, error);
        if (std::find(free_.begin(), free_.end(), index) == free_.end()) free_.push_back(index);
    }

    void fail(IssuedRead& read, int error) {
        read.status = ReadStatus::failed;
        read.error = error;
        read.message = detail::concat(
            "read of fd ", read.request.fd, " at offset ", read.request.offset,
            ": io_uring_enter failed: ", errno_name(error), " (", errno_message(error), ")");
        scheduler_->finish(std::move(read));
    }

    std::shared_ptr<ReadScheduler> scheduler_;
    FileLayer& layer_;
    io_uring ring_{};
    UniqueFd wake_fd_;
    std::uint64_t wake_count_ = 0;  // the eventfd read's destination: lives as long as the ring
    std::vector<Slot> slots_;
    std::vector<std::size_t> free_;            // slots without a read
    std::vector<bool> copying_;                // slots whose attempt a copier has
    std::size_t copier_threads_ = 0;           // asked for; 0: the automatic count
    std::optional<PageCacheCopiers> copiers_;  // this thread's, while it runs
    std::size_t unsubmitted_ = 0;
    int broken_ = 0;
    std::thread thread_;
};

}  // namespace

std::shared_ptr<FileReadEngine> make_uring_read_engine(std::shared_ptr<ReadScheduler> scheduler,
                                                       FileLayer& layer, std::size_t depth,
                                                       std::size_t copiers) {
    auto engine = std::make_shared<UringReadEngine>(std::move(scheduler), layer, depth, copiers);
    engine->start();
    return engine;
}

std::string uring_unavailable_reason() {
    io_uring ring{};
    rings_ended.load(std::memory_order_acquire);
    const int result = io_uring_queue_init(2, &ring, 0);
    if (result < 0) {
        return detail::concat("io_uring_queue_init failed: ", errno_name(-result), " (",
                              errno_message(-result), ")");
    }
    io_uring_queue_exit(&ring);
    rings_ended.fetch_add(1, std::memory_order_release);
    return {};
}

}  // namespace vtpage::vt
