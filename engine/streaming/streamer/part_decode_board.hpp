// Pages being decoded in parts (a page stored as several zstd frames) whose parts any idle decode
// thread may take. The page's own thread posts it, takes parts as any helper does, then waits
// until every part taken is done: a page never leaves the board, nor its thread's stack, while a
// helper decodes one of its parts.
//
// Lock rule: the board has no lock of its own. Every member expects the caller to hold the one
// mutex that guards it (the page loader's), and the parts are decoded with no lock held.
#pragma once

#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <optional>

namespace vtpage::vt::streamer_detail {

// One page's parts; lives on its own decode thread's stack while posted.
struct PartedPage {
    std::function<void(std::size_t part)> decode;  // runs with no lock held; may throw
    std::size_t parts = 0;
    // Guarded by the board's mutex:
    std::size_t taken = 0;
    std::size_t done = 0;
    std::exception_ptr error;  // the first part's failure
};

// A part a thread has taken: it must decode it and call finish_locked, whatever happens.
struct PartClaim {
    PartedPage* page = nullptr;
    std::size_t part = 0;
};

class PartDecodeBoard {
public:
    void post_locked(PartedPage& page);
    // The next part of `page` (its own thread), or none when every part is taken.
    std::optional<PartClaim> take_own_locked(PartedPage& page);
    // The next part of the oldest page posted (a helper), or none.
    std::optional<PartClaim> take_any_locked();
    bool has_parts_locked() const noexcept { return !pages_.empty(); }
    // Records a part done (error: why it failed). True when it was the page's last.
    static bool finish_locked(const PartClaim& claim, std::exception_ptr error);
    static bool all_done_locked(const PartedPage& page) noexcept { return page.done == page.parts; }

private:
    std::deque<PartedPage*> pages_;  // with parts not taken yet, oldest first
};

}  // namespace vtpage::vt::streamer_detail
