#include "streaming/streamer/part_decode_board.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

void PartDecodeBoard::post_locked(PartedPage& page) {
    if (page.taken < page.parts) pages_.push_back(&page);
}

// A page leaves the board when its last part is taken, so that the board never points to a page
// whose thread may return once the parts are done.
std::optional<PartClaim> PartDecodeBoard::take_own_locked(PartedPage& page) {
    if (page.taken >= page.parts) return std::nullopt;
    const PartClaim claim{&page, page.taken++};
    if (page.taken == page.parts) {
        pages_.erase(std::remove(pages_.begin(), pages_.end(), &page), pages_.end());
    }
    return claim;
}

std::optional<PartClaim> PartDecodeBoard::take_any_locked() {
    if (pages_.empty()) return std::nullopt;
    return take_own_locked(*pages_.front());
}

bool PartDecodeBoard::finish_locked(const PartClaim& claim, std::exception_ptr error) {
    PartedPage& page = *claim.page;
    if (error && !page.error) page.error = std::move(error);
    return ++page.done == page.parts;
}

}  // namespace vtpage::vt::streamer_detail
