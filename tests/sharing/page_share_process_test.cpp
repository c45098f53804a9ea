// Page sharing between real processes, on every backend this machine has: a consumer in a child
// process reads what the parent publishes; a peer killed mid-protocol (in either direction)
// leaves the survivor working or with a typed error, and nothing leaks (descriptors, mappings,
// and on a GPU, device memory).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "../support/backend_fixture.hpp"
#include "../support/child_process.hpp"
#include "../support/open_descriptors.hpp"
#include "share_stamp.hpp"
#include "vtpage/sharing/shared_region_consumer.hpp"
#include "vtpage/sharing/shared_region_producer.hpp"

namespace vtpage {
namespace {

using namespace std::chrono_literals;

void say(const char* format, auto... values) {
    std::printf(format, values...);
    std::printf("\n");
    std::fflush(stdout);
}

SharedRegionProducerSettings region_settings(std::chrono::milliseconds ack_timeout = 30s) {
    SharedRegionProducerSettings settings;
    settings.table.region_size = 64 * 2_MiB;
    settings.table.budget_bytes = 16 * 2_MiB;
    settings.ack_timeout = ack_timeout;
    settings.io_timeout = 30s;
    settings.log = Log(silent_log());
    return settings;
}

// --- child modes ------------------------------------------------------------------------------

// A consumer on descriptor 3: verifies every page it gets, reports "verified=N bad=B" whenever
// that changes, and ends when the producer says goodbye. Arguments: backend name, and
// "die-on-unpublish" to kill itself when the first unpublish arrives (before acknowledging).
int consumer_child(const std::vector<std::string>& arguments) {
    std::string reason;
    auto backend = test::try_make_backend(arguments.at(0), reason);
    if (!backend) return 2;
    const bool die_on_unpublish = arguments.size() > 1 && arguments[1] == "die-on-unpublish";
    SharedRegionConsumerSettings settings;
    if (die_on_unpublish) {
        settings.before_unmap = [](std::span<const SharedPage>) {
            say("dying mid-protocol");
            ::raise(SIGKILL);
        };
    }
    SharedRegionConsumer consumer(*backend, FdSocket(UniqueFd(3)), settings);
    std::size_t verified = 0, bad = 0;
    while (consumer.state() == ProducerState::connected) {
        auto update = consumer.poll(50ms);
        for (const SharedPage& page : update.published) {
            const bool good = test::has_stamp(*backend, page.address, page.page, page.generation,
                                              consumer.page_size());
            (good ? verified : bad) += 1;
        }
        if (!update.published.empty()) {
            say("verified=%zu bad=%zu mapped=%zu", verified, bad, consumer.pages().size());
        }
    }
    // Still mapped after the goodbye, and still right.
    for (const SharedPage& page : consumer.pages()) {
        if (!test::has_stamp(*backend, page.address, page.page, page.generation,
                             consumer.page_size())) {
            ++bad;
        }
    }
    say("final state=%s verified=%zu bad=%zu", to_string(consumer.state()), verified, bad);
    return bad == 0 ? 0 : 1;
}
VTPAGE_CHILD_MODE("share-consumer", consumer_child);

// A producer on descriptor 3: publishes pages 0..N-1 stamped with their generations, says
// "published", then waits to be killed. Arguments: backend name, N, and "die-mid-message" to
// send the first half of a message and die instead.
int producer_child(const std::vector<std::string>& arguments) {
    std::string reason;
    auto backend = test::try_make_backend(arguments.at(0), reason);
    if (!backend) return 2;
    const std::size_t count = std::stoul(arguments.at(1));
    const bool die_mid_message = arguments.size() > 2 && arguments[2] == "die-mid-message";
    SharedRegionProducer producer(*backend, region_settings());
    FdSocket socket(UniqueFd(3));
    const int raw = socket.fd();
    producer.add_consumer(std::move(socket));
    std::vector<PageIndex> pages;
    for (PageIndex page = 0; page < count; ++page) pages.push_back(page);
    for (const auto& mapping : producer.table().commit(pages)) {
        test::write_stamp(*backend, producer.table().address_of(mapping.page), mapping.page,
                          mapping.generation, producer.table().page_size());
    }
    producer.publish(pages);
    say("published %zu", count);
    if (die_mid_message) {
        if (!producer.flush(10s)) return 3;  // the whole messages first
        // A frame header that promises 4096 bytes, then 8 of them, then death.
        const std::uint32_t header[4] = {0x76747066, 0, 4096, 0};
        [[maybe_unused]] ssize_t n = ::write(raw, header, sizeof(header));
        n = ::write(raw, "vtshpart", 8);
        say("dying mid-message");
        ::raise(SIGKILL);
    }
    for (;;) std::this_thread::sleep_for(1s);  // until the parent kills it
}
VTPAGE_CHILD_MODE("share-producer", producer_child);

// --- tests --------------------------------------------------------------------------------------

class PageShareProcesses : public test::BackendTest {
protected:
    void SetUp() override {
        BackendTest::SetUp();
        if (IsSkipped()) return;
        if (!backend_->capabilities().fd_handles) {
            GTEST_SKIP() << GetParam() << " backend cannot export pages as fds here";
        }
        fds_before_ = test::open_descriptor_count();
        memory_before_ = backend_->memory_info().free;
    }
    void TearDown() override {
        if (!backend_) return;
        EXPECT_EQ(test::open_descriptor_count(), fds_before_);
        expect_baseline_resources();
        if (backend_->capabilities().gpu) {
            // Device memory comes back once every process let go (a killed child's memory is
            // freed by the driver shortly after it dies).
            std::size_t free_now = 0;
            const std::size_t slack = 4 * backend_->granularity().minimum;
            for (int i = 0; i < 100; ++i) {
                free_now = backend_->memory_info().free;
                if (free_now + slack >= memory_before_) break;
                std::this_thread::sleep_for(50ms);
            }
            EXPECT_GE(free_now + slack, memory_before_)
                << "device memory not back to its baseline: " << free_now << " free now, "
                << memory_before_ << " before";
        }
    }
    void write_pages(SharedRegionProducer& producer, std::vector<PageIndex> pages) {
        for (const auto& mapping : producer.table().commit(pages)) {
            test::write_stamp(*backend_, producer.table().address_of(mapping.page), mapping.page,
                              mapping.generation, producer.table().page_size());
        }
        producer.publish(pages);
    }

    std::size_t fds_before_ = 0;
    std::size_t memory_before_ = 0;
};

TEST_P(PageShareProcesses, AConsumerProcessSeesEveryGenerationItIsGiven) {
    auto child_end = std::optional<test::ChildProcess>();
    {
        SharedRegionProducer producer(*backend_, region_settings());
        auto [mine, theirs] = FdSocket::pair();
        producer.add_consumer(std::move(mine));
        child_end.emplace("share-consumer", std::vector<std::string>{GetParam()}, theirs.fd());
        theirs = FdSocket();  // the child holds its end now
        write_pages(producer, {0, 1, 2, 3, 4, 5, 6, 7});
        ASSERT_TRUE(child_end->wait_for_output("verified=8 bad=0")) << child_end->output();
        // Evict half (the child unmaps and acknowledges first), recommit other pages on the
        // same physical pages with new generations.
        producer.evict(std::vector<PageIndex>{0, 1, 2, 3});
        write_pages(producer, {20, 21, 22, 23});
        ASSERT_TRUE(child_end->wait_for_output("verified=12 bad=0")) << child_end->output();
        auto stats = producer.statistics();
        EXPECT_EQ(stats.fds_sent, 8u) << "each physical page's fd goes once";
        EXPECT_EQ(stats.acks_received, 1u);
        EXPECT_EQ(stats.consumers, 1u);
    }  // goodbye: finished
    auto result = child_end->wait(60);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("final state=finished verified=12 bad=0"), std::string::npos)
        << result.output;
}

TEST_P(PageShareProcesses, AConsumerKilledMidProtocolDoesNotHoldUpTheProducer) {
    {
        SharedRegionProducer producer(*backend_, region_settings(60s));
        auto [mine, theirs] = FdSocket::pair();
        producer.add_consumer(std::move(mine));
        test::ChildProcess child("share-consumer",
                                 std::vector<std::string>{GetParam(), "die-on-unpublish"},
                                 theirs.fd());
        theirs = FdSocket();
        write_pages(producer, {0, 1, 2, 3});
        ASSERT_TRUE(child.wait_for_output("verified=4 bad=0")) << child.output();
        // The child dies on receiving this, before it acknowledges. Its death (not the 60 s
        // lease) releases the pages.
        const auto start = std::chrono::steady_clock::now();
        const UnpublishTicket ticket = producer.unpublish(std::vector<PageIndex>{0, 1});
        EXPECT_TRUE(producer.wait(ticket, 20s));
        EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
        auto result = child.wait(30);
        EXPECT_EQ(result.signal, SIGKILL) << result.output;
        EXPECT_NE(result.output.find("dying mid-protocol"), std::string::npos) << result.output;
        producer.table().evict(std::vector<PageIndex>{0, 1});
        auto stats = producer.statistics();
        EXPECT_EQ(stats.consumers, 0u);
        EXPECT_EQ(stats.consumers_lost, 1u);
        EXPECT_EQ(stats.leases_expired, 0u);
        // The producer goes on working.
        write_pages(producer, {9});
        EXPECT_TRUE(producer.is_published(9));
    }
}

TEST_P(PageShareProcesses, AProducerKilledMidProtocolLeavesTheConsumerWorking) {
    auto [mine, theirs] = FdSocket::pair();
    test::ChildProcess child("share-producer", std::vector<std::string>{GetParam(), "6"},
                             theirs.fd());
    theirs = FdSocket();
    {
        SharedRegionConsumer consumer(*backend_, std::move(mine));
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (consumer.pages().size() < 6 && std::chrono::steady_clock::now() < deadline) {
            consumer.poll(50ms);
        }
        ASSERT_EQ(consumer.pages().size(), 6u) << child.output();
        child.kill(SIGKILL);
        auto result = child.wait(30);
        EXPECT_EQ(result.signal, SIGKILL) << result.output;
        try {
            for (int i = 0; i < 100; ++i) consumer.poll(50ms);
            ADD_FAILURE() << "the producer's death went unnoticed";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::io_error) << error.what();
        }
        EXPECT_EQ(consumer.state(), ProducerState::lost);
        // Keeps working: the pages it had stay mapped, with the bytes they had.
        ASSERT_EQ(consumer.pages().size(), 6u);
        for (const SharedPage& page : consumer.pages()) {
            EXPECT_TRUE(test::has_stamp(*backend_, page.address, page.page, page.generation,
                                        consumer.page_size()))
                << "page " << page.page;
        }
        EXPECT_EQ(consumer.poll(10ms).messages, 0u);
    }
}

TEST_P(PageShareProcesses, AProducerKilledMidMessageIsATypedError) {
    auto [mine, theirs] = FdSocket::pair();
    test::ChildProcess child("share-producer",
                             std::vector<std::string>{GetParam(), "2", "die-mid-message"},
                             theirs.fd());
    theirs = FdSocket();
    {
        SharedRegionConsumerSettings settings;
        settings.log = Log(silent_log());
        SharedRegionConsumer consumer(*backend_, std::move(mine), settings);
        auto result = child.wait(30);
        EXPECT_EQ(result.signal, SIGKILL) << result.output;
        EXPECT_NE(result.output.find("dying mid-message"), std::string::npos) << result.output;
        try {
            for (int i = 0; i < 100; ++i) consumer.poll(50ms);
            ADD_FAILURE() << "a truncated message went unnoticed";
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), Errc::io_error) << error.what();
        }
        EXPECT_EQ(consumer.state(), ProducerState::lost);
        // What arrived whole before the broken message stays usable.
        EXPECT_EQ(consumer.pages().size(), 2u);
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, PageShareProcesses, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
