// What a FileReadQueue's reads go through on their way to the kernel: a seam where tests inject
// faults, the same for both backends. Before every attempt (a request's first read, and each
// continuation of a short read or retry) the layer decides to let it pass, to shorten it to k
// bytes, or to fail it with an errno. The thread backend then reads with read(); the io_uring
// backend submits the (possibly shortened) read to the kernel and hands what the kernel reported
// to kernel_result(), replacing it with the chosen errno when the decision was a failure. So one
// fault script exercises both backends' handling of short reads, EAGAIN, EINTR and EIO.
//
// A layer is called from the queue's threads, several at once: implementations are thread-safe.
// It outlives every queue that uses it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vtpage::vt {

// One attempt to read part of a request.
struct ReadAttempt {
    int fd = -1;
    std::uint64_t offset = 0;          // where this attempt reads (request offset + bytes done)
    std::size_t size = 0;              // what is left of the request
    std::uint64_t ticket = 0;          // the request's ticket
    std::uint64_t request_offset = 0;  // where the request starts
};

// What the layer does with an attempt.
struct ReadDecision {
    enum class Action { pass, shorten, fail };
    Action action = Action::pass;
    std::size_t bytes = 0;  // shorten: read at most this many (at least 1)
    int error = 0;          // fail: the errno the attempt reports (EIO, EAGAIN, EINTR...)

    static ReadDecision pass() { return {}; }
    static ReadDecision shorten(std::size_t bytes) { return {Action::shorten, bytes, 0}; }
    static ReadDecision fail(int error) { return {Action::fail, 0, error}; }
};

class FileLayer {
public:
    virtual ~FileLayer() = default;
    // Called before every attempt, on the thread that makes it; it may block (a test holds
    // reads back with it). Passes everything by default.
    virtual ReadDecision decide(const ReadAttempt& attempt);
    // The thread backend's positioned read: ::pread. Bytes read, or -errno.
    virtual std::int64_t read(int fd, void* destination, std::size_t size, std::uint64_t offset);
    // The io_uring backend's view of a completion: the kernel's result (bytes, or -errno) for
    // the attempt, which the layer may replace. Unchanged by default.
    virtual std::int64_t kernel_result(const ReadAttempt& attempt, std::int64_t result);
};

// The real system calls, no faults: what a queue uses when its settings name no layer.
FileLayer& system_file_layer();

}  // namespace vtpage::vt
