// One read on its way through a backend, attempt by attempt: what the next attempt asks for,
// and what an attempt's result (bytes, or -errno) means for the read: more to read, a retry
// after EAGAIN or EINTR, or the end (the whole range, the file's end, an error). The same for
// both backends, so that one fault script tests both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "vtpage/streaming/io/file_layer.hpp"
#include "vtpage/streaming/io/file_read_queue.hpp"

namespace vtpage::vt {

// The most one attempt asks for (io_uring takes 32-bit lengths, Linux reads ~2 GiB at most).
inline constexpr std::size_t file_read_max_attempt_bytes = std::size_t(1) << 30;

// A read handed to a backend, and how far it got.
struct IssuedRead {
    ReadTicket ticket;
    ReadRequest request;
    std::size_t done = 0;                   // bytes read so far
    unsigned retries_in_a_row = 0;          // EAGAIN or EINTR since the last progress
    std::uint64_t retries = 0;              // in all (statistics)
    std::uint64_t continued = 0;            // attempts after a short read (statistics)
    std::uint64_t page_cache_attempts = 0;  // io_uring: attempts served from the page cache
    ReadStatus status = ReadStatus::ok;
    int error = 0;
    std::string message;

    // The next attempt: the rest of the range, at most file_read_max_attempt_bytes.
    ReadAttempt attempt() const;
    std::byte* next_destination() const { return request.destination.data() + done; }
};

// How many bytes an attempt asks for once the layer has decided.
std::size_t attempt_bytes(const ReadAttempt& attempt, const ReadDecision& decision);

enum class AttemptOutcome { again, finished };
// Applies one attempt's result (bytes, or -errno) to its read.
AttemptOutcome apply_attempt_result(IssuedRead& read, std::int64_t result);

}  // namespace vtpage::vt
