#include "vtpage/streaming/io/file_read_queue.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "streaming/io/file_read_engine.hpp"
#include "streaming/io/read_scheduler.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage::vt {

namespace {

bool aligned(std::uint64_t value) { return value % file_read_direct_alignment == 0; }

// An O_DIRECT request out of alignment: the reason it fails, or empty. The kernel would refuse
// it with EINVAL too, but only on some filesystems, and after taking a slot.
std::string direct_misalignment(const ReadRequest& request) {
    const int flags = ::fcntl(request.fd, F_GETFL);
    if (flags < 0 || (flags & O_DIRECT) == 0) return {};
    const auto address = reinterpret_cast<std::uintptr_t>(request.destination.data());
    if (aligned(request.offset) && aligned(request.destination.size()) && aligned(address)) {
        return {};
    }
    return detail::concat("read of fd ", request.fd, " at offset ", request.offset, " (",
                          request.destination.size(), " bytes): EINVAL (", errno_message(EINVAL),
                          "): an O_DIRECT read needs offset, size and destination address "
                          "aligned to ",
                          file_read_direct_alignment, " bytes");
}

}  // namespace

std::string_view to_string(FileReadBackend backend) noexcept {
    switch (backend) {
        case FileReadBackend::automatic:
            return "automatic";
        case FileReadBackend::io_uring:
            return "io_uring";
        case FileReadBackend::threads:
            return "threads";
    }
    return "unknown";
}

std::string_view to_string(ReadStatus status) noexcept {
    switch (status) {
        case ReadStatus::ok:
            return "ok";
        case ReadStatus::failed:
            return "failed";
        case ReadStatus::cancelled:
            return "cancelled";
    }
    return "unknown";
}

FileReadQueue::FileReadQueue(FileReadQueueSettings settings) : settings_(std::move(settings)) {
    if (settings_.depth == 0 || settings_.max_queued == 0 || settings_.threads == 0) {
        throw Error(Errc::invalid_argument, "FileReadQueue",
                    "depth, max_queued and threads must be at least 1",
                    detail::concat("depth=", settings_.depth, " max_queued=", settings_.max_queued,
                                   " threads=", settings_.threads));
    }
    if (settings_.page_cache_copiers > FileReadQueueSettings::max_page_cache_copiers) {
        throw Error(Errc::invalid_argument, "FileReadQueue",
                    detail::concat("page_cache_copiers must be 0 (automatic) to ",
                                   FileReadQueueSettings::max_page_cache_copiers),
                    detail::concat("page_cache_copiers=", settings_.page_cache_copiers));
    }
    scheduler_ = std::make_shared<ReadScheduler>(settings_.depth, settings_.max_queued);
    FileLayer& layer = settings_.layer ? *settings_.layer : system_file_layer();
    if (settings_.backend != FileReadBackend::threads) {
        try {
            engine_ = make_uring_read_engine(scheduler_, layer, settings_.depth,
                                             settings_.page_cache_copiers);
            backend_ = FileReadBackend::io_uring;
            return;
        } catch (const Error& error) {
            if (settings_.backend == FileReadBackend::io_uring ||
                error.code() != Errc::not_supported) {
                throw;
            }
            settings_.log.info("FileReadQueue: no io_uring (", error.detail(),
                               "); reading with threads");
        }
    }
    const std::size_t threads = std::min(settings_.threads, settings_.depth);
    engine_ = make_thread_read_engine(scheduler_, layer, threads);
    backend_ = FileReadBackend::threads;
}

FileReadQueue::~FileReadQueue() {
    try {
        scheduler_->stop();
        const auto deadline = std::chrono::steady_clock::now() + settings_.shutdown_timeout;
        if (!engine_->stop(deadline)) {
            const FileReadStatistics left = scheduler_->statistics();
            settings_.log.error("FileReadQueue: ", left.in_flight_now,
                                " reads still in flight after ", settings_.shutdown_timeout.count(),
                                " ms; their threads finish them on their own, and their "
                                "destinations must stay valid until then");
        }
    } catch (...) {  // nothing to report to: the destructor never throws
    }
}

ReadTicket FileReadQueue::submit(const ReadRequest& request) {
    if (request.fd < 0 || request.destination.empty()) {
        throw Error(Errc::invalid_argument, "FileReadQueue::submit",
                    "a read needs an open fd and a destination of at least one byte",
                    detail::concat("fd=", request.fd, " offset=", request.offset,
                                   " bytes=", request.destination.size()));
    }
    if (std::string refused = direct_misalignment(request); !refused.empty()) {
        return scheduler_->submit_failed(request, EINVAL, std::move(refused));
    }
    return scheduler_->submit(request);
}

bool FileReadQueue::cancel(ReadTicket ticket) { return scheduler_->cancel(ticket); }

std::vector<ReadCompletion> FileReadQueue::wait(std::size_t min_completions,
                                                std::chrono::milliseconds timeout) {
    return scheduler_->take(min_completions, timeout);
}

std::vector<ReadCompletion> FileReadQueue::poll() {
    return scheduler_->take(0, std::chrono::milliseconds(0));
}

FileReadStatistics FileReadQueue::statistics() const { return scheduler_->statistics(); }

std::string FileReadQueue::io_uring_unavailable_reason() { return uring_unavailable_reason(); }

}  // namespace vtpage::vt
