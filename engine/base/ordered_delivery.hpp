// Callbacks delivered in the order of the changes they report, one at a time, with no lock of
// the caller's held: a change takes a ticket under the lock that made it (so tickets follow the
// changes), and its report waits for the ticket's turn. The page table and the streamer report
// their events this way, so that an app sees a page committed, ready and evicted in the order
// they happened, whichever threads made them.
//
// A thread that holds a ticket must deliver it (or drop it, which passes its turn) before it
// waits for anything a later ticket's holder may hold: deliver right after the change.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>

#include "base/ranked_mutex.hpp"
#include "base/test_points.hpp"

namespace vtpage::detail {

class OrderedDelivery {
public:
    class Ticket {
    public:
        Ticket() = default;
        Ticket(Ticket&& other) noexcept
            : owner_(std::exchange(other.owner_, nullptr)), number_(other.number_) {}
        Ticket& operator=(Ticket&& other) noexcept {
            if (this != &other) {
                pass();
                owner_ = std::exchange(other.owner_, nullptr);
                number_ = other.number_;
            }
            return *this;
        }
        ~Ticket() { pass(); }
        // Waits for this ticket's turn and passes it on without delivering anything.
        void pass() {
            if (owner_) std::exchange(owner_, nullptr)->run_in_turn(number_, [] {});
        }

    private:
        friend class OrderedDelivery;
        Ticket(OrderedDelivery* owner, std::uint64_t number) : owner_(owner), number_(number) {}
        OrderedDelivery* owner_ = nullptr;
        std::uint64_t number_ = 0;
    };

    explicit OrderedDelivery(const char* name) : turn_mutex_(LockRank::delivery_turn, name) {}
    OrderedDelivery(const OrderedDelivery&) = delete;
    OrderedDelivery& operator=(const OrderedDelivery&) = delete;

    // The next ticket. Take it under the lock that made the change it reports.
    Ticket take() { return Ticket(this, next_++); }
    // Waits for the ticket's turn, runs `deliver` (no lock of ours held: it may call back into
    // the owner's queries) and passes the turn on, also when `deliver` throws.
    template <typename Deliver>
    void deliver(Ticket& ticket, Deliver&& deliver) {
        if (!ticket.owner_) return;
        ticket.owner_ = nullptr;
        run_in_turn(ticket.number_, std::forward<Deliver>(deliver));
    }

private:
    template <typename Run>
    void run_in_turn(std::uint64_t number, Run&& run) {
        std::unique_lock turn(turn_mutex_);
        turn_changed_.wait(turn, [&] { return serving_ == number; });
        turn.unlock();
        VTPAGE_TEST_POINT("delivery.in_turn");
        struct PassOn {
            OrderedDelivery& self;
            ~PassOn() {
                VTPAGE_TEST_POINT("delivery.passing_turn");
                std::lock_guard lock(self.turn_mutex_);
                ++self.serving_;
                self.turn_changed_.notify_all();
            }
        } pass_on{*this};
        run();
    }

    std::atomic<std::uint64_t> next_{0};  // callers serialize take() with their own lock
    RankedMutex turn_mutex_;
    std::condition_variable_any turn_changed_;
    std::uint64_t serving_ = 0;  // guarded by turn_mutex_
};

}  // namespace vtpage::detail
