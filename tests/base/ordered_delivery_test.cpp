// Deliveries run in the order their tickets were taken, whichever thread gets there first; a
// ticket dropped or a delivery that throws passes its turn on.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/ordered_delivery.hpp"

namespace vtpage::detail {
namespace {

TEST(OrderedDeliveryTest, DeliversInTicketOrderWhateverTheThreadsDo) {
    OrderedDelivery delivery("test");
    constexpr int count = 8;
    std::vector<OrderedDelivery::Ticket> tickets;
    for (int i = 0; i < count; ++i) tickets.push_back(delivery.take());
    std::vector<int> order;  // written in turn only
    std::vector<std::thread> threads;
    // The last ticket's thread starts first; each must wait for the ones before it.
    for (int i = count - 1; i >= 0; --i) {
        threads.emplace_back([&, i] {
            if (i == 3) return tickets[i].pass();  // a change with nothing to report
            if (i == 5) {
                try {
                    delivery.deliver(tickets[i], [&] {
                        order.push_back(i);
                        throw std::runtime_error("a callback failed");
                    });
                } catch (const std::runtime_error&) {}
                return;
            }
            delivery.deliver(tickets[i], [&] { order.push_back(i); });
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 4, 5, 6, 7}));
}

TEST(OrderedDeliveryTest, ADroppedTicketPassesItsTurn) {
    OrderedDelivery delivery("test");
    { OrderedDelivery::Ticket dropped = delivery.take(); }
    OrderedDelivery::Ticket next = delivery.take();
    bool ran = false;
    delivery.deliver(next, [&] { ran = true; });
    EXPECT_TRUE(ran);
    delivery.deliver(next, [&] { ran = false; });  // delivered already: nothing runs
    EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace vtpage::detail
