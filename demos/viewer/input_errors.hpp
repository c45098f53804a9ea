// The texture's pages that could not be read as the viewer flew: a baked file with a corrupt
// tile fails that page's fill (corrupt_data, naming the page and tile) without stopping the
// streamer. The run goes on without those pages, and its exit status says the input was bad
// (2), naming them, whichever page it was: a mid-level tile or the tail page.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "vtpage/base/error.hpp"

namespace vtpage::viewer {

class InputErrors {
public:
    // Keeps error if it is about the input (a corrupt or unreadable file); false otherwise.
    // Called from the streamer's workers. A page that fails is asked for again by the next
    // frames and fails again: the same message is kept once.
    bool record(const Error& error);
    // Whether `error` is one that record() keeps.
    static bool is_input_error(const Error& error) noexcept;

    // The distinct failures kept (at most `kept`).
    std::uint64_t count() const;
    // "2 reads of T failed: <what each error said>; ..." (the first few), or "".
    std::string summary(const std::string& texture) const;

private:
    static constexpr std::size_t kept = 4096;  // distinct messages; more are not told apart
    static constexpr std::size_t printed = 8;  // in the summary; the rest are counted
    mutable std::mutex mutex_;
    std::set<std::string> messages_;
};

}  // namespace vtpage::viewer
