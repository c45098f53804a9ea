#include "streaming/io/read_attempt.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage::vt {

namespace {

AttemptOutcome fail(IssuedRead& read, int error, const std::string& what) {
    read.status = ReadStatus::failed;
    read.error = error;
    read.message =
        detail::concat("read of fd ", read.request.fd, " at offset ", read.request.offset, " (",
                       read.request.destination.size(), " bytes): ", what);
    return AttemptOutcome::finished;
}

std::string describe_errno(int error) {
    return detail::concat(errno_name(error), " (", errno_message(error), ")");
}

}  // namespace

ReadAttempt IssuedRead::attempt() const {
    const std::size_t left = request.destination.size() - done;
    return ReadAttempt{.fd = request.fd,
                       .offset = request.offset + done,
                       .size = std::min(left, file_read_max_attempt_bytes),
                       .ticket = ticket.id,
                       .request_offset = request.offset};
}

std::size_t attempt_bytes(const ReadAttempt& attempt, const ReadDecision& decision) {
    if (decision.action != ReadDecision::Action::shorten) return attempt.size;
    // A shortened attempt still reads a byte: the read makes progress whatever the script.
    return std::clamp<std::size_t>(decision.bytes, 1, attempt.size);
}

AttemptOutcome apply_attempt_result(IssuedRead& read, std::int64_t result) {
    const std::size_t size = read.request.destination.size();
    if (result > 0) {
        read.done = std::min(size, read.done + std::size_t(result));
        read.retries_in_a_row = 0;
        if (read.done == size) return AttemptOutcome::finished;
        ++read.continued;
        return AttemptOutcome::again;
    }
    if (result == 0) {
        // A file truncated while open, or a range past its end.
        return fail(read, 0,
                    detail::concat("the file ends at byte ", read.request.offset + read.done));
    }
    const int error = int(-result);
    if (error != EAGAIN && error != EINTR) return fail(read, error, describe_errno(error));
    if (read.retries_in_a_row == file_read_max_retries) {
        return fail(read, error,
                    detail::concat(describe_errno(error), " ", file_read_max_retries,
                                   " times in a row, at byte ", read.request.offset + read.done));
    }
    ++read.retries_in_a_row;
    ++read.retries;
    return AttemptOutcome::again;
}

}  // namespace vtpage::vt
