// Positioned reads of byte ranges of open files into the caller's memory, many in flight: the
// I/O layer under a pipeline that reads baked pages at the disk's speed.
//
//   FileReadQueue queue({.depth = 32});
//   auto ticket = queue.submit({.fd = fd, .offset = offset, .destination = page, .tag = page_id});
//   for (const ReadCompletion& done : queue.wait(1, 100ms)) { ... done.tag, done.status ... }
//
// submit() never waits: the request joins a queue of at most max_queued waiting requests (busy
// beyond that, nothing taken) and is issued when one of the `depth` slots in flight is free, in
// submission order. Every submitted request gets exactly one completion, from wait() or poll():
//   ok        the whole range was read (short reads are continued until it is);
//   failed    error is the errno (EIO, EINVAL, ...), message names it, the fd and the offset;
//             a file that ends inside the range (truncated while open) fails with "the file
//             ends at byte N" and error 0; a failed read's destination may hold some bytes;
//   cancelled cancel() took it before it was issued: its destination was never written.
// EAGAIN and EINTR are retried, 64 times in a row at most (then failed, saying so). An issued
// read cannot be cancelled: cancel() returns false and its completion comes with
// cancel_requested set.
//
// Backends: io_uring (one ring, one thread submitting and reaping) or a pool of threads calling
// pread; `automatic` takes io_uring where the kernel allows it (io_uring_queue_init fails with
// ENOSYS or EPERM in many containers, and the library may have been built without liburing),
// else threads. Naming io_uring where it cannot work is not_supported.
//
// O_DIRECT: a request on an fd opened with O_DIRECT must have its offset, size and destination
// address aligned to 4096 bytes; one that is not fails with EINVAL (never issued).
//
// The destination memory and the fd stay valid until the request's completion has been taken
// (or the queue is gone). A read still in flight when the queue's shutdown_timeout ends goes on
// after the queue: a request's keep_alive, held until its read has ended, can own the memory.
// Destruction cancels what was not issued, waits for the issued reads (shutdown_timeout, then logs
// and leaves the reads' threads to finish on their own), frees the ring and joins the threads; it
// never throws. Thread-safe: any thread may submit, cancel and wait.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vtpage/base/log.hpp"
#include "vtpage/streaming/io/file_layer.hpp"

namespace vtpage::vt {

inline constexpr std::uint64_t file_read_direct_alignment = 4096;
inline constexpr unsigned file_read_max_retries = 64;

enum class FileReadBackend { automatic, io_uring, threads };
std::string_view to_string(FileReadBackend backend) noexcept;

struct ReadTicket {
    std::uint64_t id = 0;  // 0: no request
    auto operator<=>(const ReadTicket&) const = default;
};

struct ReadRequest {
    int fd = -1;
    std::uint64_t offset = 0;
    std::span<std::byte> destination;  // read destination.size() bytes
    std::uint64_t tag = 0;             // the caller's, handed back in the completion
    // Released once the read has ended (or was cancelled), never before: owns what the read
    // writes into when that may outlive the queue.
    std::shared_ptr<const void> keep_alive;
};

enum class ReadStatus { ok, failed, cancelled };
std::string_view to_string(ReadStatus status) noexcept;

struct ReadCompletion {
    std::uint64_t tag = 0;
    ReadTicket ticket;
    ReadStatus status = ReadStatus::ok;
    std::size_t bytes = 0;          // read into the destination (all of it when ok)
    int error = 0;                  // failed: the errno (0: the file ended first)
    std::string message;            // failed: what went wrong, with fd and offset
    bool cancel_requested = false;  // cancel() was asked after the read was issued
};

struct FileReadQueueSettings {
    std::size_t depth = 32;         // reads in flight at most
    std::size_t max_queued = 4096;  // requests waiting to be issued at most
    FileReadBackend backend = FileReadBackend::automatic;
    std::size_t threads = 8;  // the threads backend: threads calling pread (at most depth)
    // io_uring: threads that copy a buffered read whose bytes are all in the page cache, beside
    // the ring; 0: a quarter of the usable CPUs, 1 to 4. At most max_page_cache_copiers.
    std::size_t page_cache_copiers = 0;
    static constexpr std::size_t max_page_cache_copiers = 64;
    FileLayer* layer = nullptr;  // null: the real system calls
    std::chrono::milliseconds shutdown_timeout{10'000};
    Log log;
};

struct FileReadStatistics {
    std::uint64_t submitted = 0;
    std::uint64_t issued = 0;
    std::uint64_t completed_ok = 0;
    std::uint64_t failed = 0;
    std::uint64_t cancelled = 0;  // taken back before they were issued
    std::uint64_t retries = 0;    // attempts repeated after EAGAIN or EINTR
    std::uint64_t continued = 0;  // attempts that continued a short read
    // io_uring: attempts copied from the page cache at once (every byte cached), not queued
    // in the ring.
    std::uint64_t page_cache_attempts = 0;
    std::uint64_t bytes_read = 0;
    std::size_t in_flight_now = 0;
    std::size_t max_in_flight = 0;
    std::size_t queued_now = 0;
    std::size_t queued_peak = 0;
};

class ReadScheduler;
class FileReadEngine;

class FileReadQueue {
public:
    // invalid_argument for a depth of 0, not_supported for an io_uring that cannot work.
    explicit FileReadQueue(FileReadQueueSettings settings = {});
    ~FileReadQueue();
    FileReadQueue(const FileReadQueue&) = delete;
    FileReadQueue& operator=(const FileReadQueue&) = delete;

    // Queues a read. invalid_argument for a negative fd or an empty destination, busy when
    // max_queued requests wait already.
    ReadTicket submit(const ReadRequest& request);
    // true: the request had not been issued and completes as cancelled. false: it was issued
    // (its completion will say cancel_requested), has completed, or never existed.
    bool cancel(ReadTicket ticket);
    // Waits until at least min_completions completions are there (fewer when no more can come:
    // nothing waits or is in flight), at most `timeout`; returns all there are.
    std::vector<ReadCompletion> wait(std::size_t min_completions,
                                     std::chrono::milliseconds timeout);
    // The completions there are now, without waiting.
    std::vector<ReadCompletion> poll();

    FileReadStatistics statistics() const;
    // The backend in use: io_uring or threads, never automatic.
    FileReadBackend backend() const noexcept { return backend_; }
    // Empty where io_uring works; else why not (built without liburing, or the kernel's errno).
    static std::string io_uring_unavailable_reason();

private:
    FileReadQueueSettings settings_;
    FileReadBackend backend_ = FileReadBackend::threads;
    std::shared_ptr<ReadScheduler> scheduler_;
    std::shared_ptr<FileReadEngine> engine_;
};

}  // namespace vtpage::vt
