// The threads backend: each thread takes a read, makes its attempts with the layer's pread until
// the read is finished, and takes the next. Portable, and what runs where io_uring cannot.
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "streaming/io/file_read_engine.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/trace.hpp"

namespace vtpage::vt {

namespace {

class ThreadReadEngine : public FileReadEngine,
                         public std::enable_shared_from_this<ThreadReadEngine> {
public:
    ThreadReadEngine(std::shared_ptr<ReadScheduler> scheduler, FileLayer& layer)
        : scheduler_(std::move(scheduler)), layer_(layer) {}

    void start(std::size_t count) {
        try {
            for (std::size_t i = 0; i < count; ++i) {
                threads_.emplace_back([self = shared_from_this()] { self->run(); });
            }
        } catch (const std::system_error& error) {
            // No queue comes of it: end the threads that did start.
            scheduler_->stop();
            for (std::thread& thread : threads_) thread.join();
            threads_.clear();
            throw Error(Errc::backend_failure, "FileReadQueue", "cannot start a read thread",
                        detail::concat("threads=", count), error.code().value(),
                        errno_name(error.code().value()));
        }
    }

    bool stop(std::chrono::steady_clock::time_point deadline) override {
        const bool idle = scheduler_->wait_idle(deadline);
        for (std::thread& thread : threads_) {
            if (idle) {
                thread.join();
            } else {
                thread.detach();  // each holds the engine: it ends when its read does
            }
        }
        threads_.clear();
        return idle;
    }

private:
    void run() {
        trace::name_thread("vtpage file read");
        while (std::optional<IssuedRead> read = scheduler_->next(true)) {
            {
                VTPAGE_TRACE_SCOPE("io", "pread");
                perform(*read);
            }
            scheduler_->finish(std::move(*read));
        }
    }

    void perform(IssuedRead& read) {
        AttemptOutcome outcome = AttemptOutcome::again;
        while (outcome == AttemptOutcome::again) {
            const ReadAttempt attempt = read.attempt();
            const ReadDecision decision = layer_.decide(attempt);
            const std::int64_t result =
                decision.action == ReadDecision::Action::fail
                    ? -std::int64_t(decision.error)
                    : layer_.read(attempt.fd, read.next_destination(),
                                  attempt_bytes(attempt, decision), attempt.offset);
            outcome = apply_attempt_result(read, result);
        }
    }

    std::shared_ptr<ReadScheduler> scheduler_;
    FileLayer& layer_;
    std::vector<std::thread> threads_;
};

}  // namespace

std::shared_ptr<FileReadEngine> make_thread_read_engine(std::shared_ptr<ReadScheduler> scheduler,
                                                        FileLayer& layer, std::size_t threads) {
    auto engine = std::make_shared<ThreadReadEngine>(std::move(scheduler), layer);
    engine->start(threads);
    return engine;
}

}  // namespace vtpage::vt
