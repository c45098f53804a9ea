// The reuse rule of vtpage, in one place: memory that a frame in flight may still read (an
// evicted page, the place of an evicted packed level) is given to something else only once
// every frame begun before its eviction was reported is complete. A frame samples what the
// indirection upload it saw pointed at, so "reported" is the moment after which no new frame
// can reach the old contents, and the frame current then is the one to wait for.
//
// FrameFencedReuse<T> holds what was let go, each item with the frame it waits for (its fence),
// and hands back the items whose fence is complete ("ripe"). An item let go before its
// eviction was reported waits for an unknown frame (hold_unreported) until fence_unreported()
// names it. Frame numbers follow PageTable's: frame N is complete once complete_frame(M >= N)
// returned, and an app that never begins frames has everything ripe at once (fence 0).
//
// Not thread-safe: its owner's lock guards it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "vtpage/core/page_table.hpp"

namespace vtpage {

template <typename T>
class FrameFencedReuse {
public:
    // The fence of an item whose eviction is not reported yet: never ripe.
    static constexpr FrameId unreported = ~FrameId(0);

    // Ripe once frame `fence` is complete (0: at once).
    void hold(T item, FrameId fence) { held_.push_back({std::move(item), fence}); }
    // Ripe only after fence_unreported() gave it a frame, and that frame is complete.
    void hold_unreported(T item) { hold(std::move(item), unreported); }
    // The evictions of the unreported items were reported while `current` was the current
    // frame: they wait for it.
    void fence_unreported(FrameId current) {
        for (Held& held : held_) {
            if (held.fence == unreported) held.fence = current;
        }
    }

    std::size_t size() const noexcept { return held_.size(); }
    bool empty() const noexcept { return held_.empty(); }
    std::size_t ripe_count(FrameId completed) const {
        return std::size_t(std::count_if(
            held_.begin(), held_.end(), [&](const Held& held) { return held.fence <= completed; }));
    }
    // Held items that are not ripe, and the earliest and latest frames they wait for (for
    // messages that say what is waited for).
    struct Waiting {
        std::size_t count = 0;
        FrameId first = 0;
        FrameId last = 0;
    };
    Waiting waiting(FrameId completed) const {
        Waiting result;
        for (const Held& held : held_) {
            if (held.fence <= completed) continue;
            result.first = result.count == 0 ? held.fence : std::min(result.first, held.fence);
            result.last = std::max(result.last, held.fence);
            ++result.count;
        }
        return result;
    }

    // Up to `count` ripe items, the first held first.
    std::vector<T> take_ripe(FrameId completed, std::size_t count) {
        std::vector<T> taken;
        for (auto it = held_.begin(); it != held_.end() && taken.size() < count;) {
            if (it->fence > completed) {
                ++it;
                continue;
            }
            taken.push_back(std::move(it->item));
            it = held_.erase(it);
        }
        return taken;
    }
    // The first ripe item that `accept` takes, if any.
    template <typename Accept>
    std::optional<T> take_first_ripe(FrameId completed, Accept accept) {
        auto found = std::find_if(held_.begin(), held_.end(), [&](const Held& held) {
            return held.fence <= completed && accept(std::as_const(held.item));
        });
        if (found == held_.end()) return std::nullopt;
        T item = std::move(found->item);
        held_.erase(found);
        return item;
    }
    // Whether every held item that `matches` is ripe.
    template <typename Match>
    bool all_ripe(FrameId completed, Match matches) const {
        return std::none_of(held_.begin(), held_.end(), [&](const Held& held) {
            return held.fence > completed && matches(held.item);
        });
    }
    // Drops the held items that `matches`, ripe or not; returns how many.
    template <typename Match>
    std::size_t drop_if(Match matches) {
        return std::size_t(
            std::erase_if(held_, [&](const Held& held) { return matches(held.item); }));
    }
    // Everything held, ripe or not (for shutdown, after the frames are known to be done).
    std::vector<T> take_all() {
        std::vector<T> taken;
        taken.reserve(held_.size());
        for (Held& held : held_) taken.push_back(std::move(held.item));
        held_.clear();
        return taken;
    }
    template <typename Visit>
    void for_each(Visit visit) const {
        for (const Held& held : held_) visit(held.item, held.fence);
    }

private:
    struct Held {
        T item;
        FrameId fence = 0;
    };
    std::deque<Held> held_;
};

}  // namespace vtpage
