// Page sharing within one process, producer and consumers on their own host backends (as they
// would be in separate processes): the protocol's rules, step by step and deterministic.
// Separate processes, killed peers and CUDA are in page_share_process_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "../support/expect_error.hpp"
#include "../support/open_descriptors.hpp"
#include "share_stamp.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/sharing/shared_region_consumer.hpp"
#include "vtpage/sharing/shared_region_producer.hpp"

namespace vtpage {
namespace {

using namespace std::chrono_literals;

HostBackendSettings quiet_host() {
    HostBackendSettings settings;
    settings.log = Log(silent_log());
    return settings;
}

SharedRegionProducerSettings small_region(std::size_t budget_pages = 16) {
    SharedRegionProducerSettings settings;
    settings.table.region_size = 64 * 2_MiB;
    settings.table.budget_bytes = budget_pages * 2_MiB;
    settings.ack_timeout = 10s;
    settings.io_timeout = 10s;
    settings.log = Log(silent_log());
    return settings;
}

SharedRegionConsumerSettings quiet_consumer() {
    SharedRegionConsumerSettings settings;
    settings.log = Log(silent_log());
    return settings;
}

class PageShare : public testing::Test {
protected:
    void SetUp() override { fds_before_ = test::open_descriptor_count(); }
    void TearDown() override {
        // Every descriptor the protocol opened (exports, imports, sockets) is closed again.
        EXPECT_EQ(test::open_descriptor_count(), fds_before_);
        EXPECT_EQ(producer_backend_.live_resources(), LiveResources{});
        EXPECT_EQ(consumer_backend_.live_resources(), LiveResources{});
    }

    // Commits the pages, stamps them with their generation and publishes them.
    std::vector<PageMapping> commit_and_publish(SharedRegionProducer& producer,
                                                std::vector<PageIndex> pages) {
        auto mappings = producer.table().commit(pages);
        for (const auto& mapping : mappings) {
            test::write_stamp(producer_backend_, producer.table().address_of(mapping.page),
                              mapping.page, mapping.generation, 2_MiB);
        }
        producer.publish(pages);
        return mappings;
    }
    // Polls until the condition holds (or 5 s pass).
    template <typename Condition>
    bool poll_until(SharedRegionConsumer& consumer, Condition condition) {
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!condition()) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            consumer.poll(10ms);
        }
        return true;
    }
    bool sees_stamps(SharedRegionConsumer& consumer) {
        for (const SharedPage& page : consumer.pages()) {
            if (!test::has_stamp(consumer_backend_, page.address, page.page, page.generation,
                                 2_MiB)) {
                return false;
            }
        }
        return true;
    }

    std::size_t fds_before_ = 0;
    HostBackend producer_backend_{quiet_host()};
    HostBackend consumer_backend_{quiet_host()};
};

TEST_F(PageShare, ConsumerSeesPublishedPagesAtTheSameIndex) {
    SharedRegionProducer producer(producer_backend_, small_region());
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    EXPECT_EQ(consumer.page_count(), 64u);
    EXPECT_EQ(consumer.page_size(), 2_MiB);
    EXPECT_EQ(consumer.producer_pid(), static_cast<std::uint32_t>(getpid()));

    auto mappings = commit_and_publish(producer, {3, 4, 40});
    SharedRegionUpdate update = consumer.poll(2s);
    ASSERT_EQ(update.published.size(), 3u);
    for (const auto& mapping : mappings) {
        auto page = consumer.lookup(mapping.page);
        ASSERT_TRUE(page) << mapping.page;
        EXPECT_EQ(page->generation, mapping.generation);
        EXPECT_EQ(page->address, consumer.base() + mapping.page * 2_MiB);
        EXPECT_FALSE(page->compressed);
        EXPECT_TRUE(test::has_stamp(consumer_backend_, page->address, mapping.page,
                                    mapping.generation, 2_MiB));
    }
    EXPECT_FALSE(consumer.lookup(5));
    // The consumer maps the producer's memory, not a copy: a later write shows.
    test::write_stamp(producer_backend_, producer.table().address_of(40), 40, 999, 2_MiB);
    EXPECT_TRUE(test::has_stamp(consumer_backend_, consumer.lookup(40)->address, 40, 999, 2_MiB));
    // Read-only by default.
    std::uint32_t word = 1;
    EXPECT_ERRC(consumer_backend_.write(consumer.lookup(40)->address, &word, 4),
                Errc::access_denied);
}

TEST_F(PageShare, UnpublishWaitsForTheConsumersAcknowledgement) {
    SharedRegionProducer producer(producer_backend_, small_region());
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    commit_and_publish(producer, {1, 2});
    consumer.poll(2s);

    const UnpublishTicket ticket = producer.unpublish(std::vector<PageIndex>{1});
    EXPECT_FALSE(producer.is_published(1));
    // The consumer has not acknowledged: the page stays pinned, so the owner cannot evict it.
    EXPECT_FALSE(producer.wait(ticket, 100ms));
    EXPECT_ERRC(producer.table().evict(std::vector<PageIndex>{1}), Errc::busy);
    EXPECT_TRUE(consumer.lookup(1).has_value());

    SharedRegionUpdate update = consumer.poll(2s);  // unmaps, then acknowledges
    ASSERT_EQ(update.unpublished.size(), 1u);
    EXPECT_EQ(update.unpublished[0].page, 1u);
    EXPECT_FALSE(consumer.lookup(1).has_value());
    EXPECT_TRUE(producer.wait(ticket, 5s));
    producer.table().evict(std::vector<PageIndex>{1});
    EXPECT_FALSE(producer.table().is_resident(1));
    // Reading where the page was is refused, not a read of recycled memory.
    std::uint32_t word = 0;
    EXPECT_ERRC(consumer_backend_.read(&word, consumer.base() + 1 * 2_MiB, 4), Errc::not_mapped);
    auto stats = producer.statistics();
    EXPECT_EQ(stats.acks_received, 1u);
    EXPECT_EQ(stats.published_pages, 1u);
    EXPECT_EQ(stats.retiring_pages, 0u);
    EXPECT_EQ(stats.unpublish_latency.count, 1u);
}

TEST_F(PageShare, EachPhysicalPageFdIsSentOnceThenOnlyMapUpdates) {
    SharedRegionProducer producer(producer_backend_, small_region(4));
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    std::thread acknowledger;
    std::atomic<bool> stop{false};
    acknowledger = std::thread([&] {
        while (!stop) consumer.poll(5ms);
    });
    // Ten rounds over a budget of four pages: the same four physical pages are recycled.
    std::vector<std::uint64_t> generations;
    for (PageIndex round = 0; round < 10; ++round) {
        std::vector<PageIndex> pages{round * 4, round * 4 + 1, round * 4 + 2, round * 4 + 3};
        for (const auto& mapping : commit_and_publish(producer, pages)) {
            generations.push_back(mapping.generation);
        }
        producer.evict(pages);
    }
    stop = true;
    acknowledger.join();
    auto produced = producer.statistics();
    auto consumed = consumer.statistics();
    EXPECT_EQ(produced.table.pool.creates, 4u);
    EXPECT_EQ(produced.exported_pages, 4u);
    EXPECT_EQ(produced.fds_sent, 4u);
    EXPECT_EQ(consumed.fds_received, 4u);
    EXPECT_EQ(consumed.imported_pages, 4u);
    EXPECT_EQ(produced.pages_published, 40u);
    EXPECT_EQ(consumed.pages_published, 40u);
    EXPECT_EQ(consumed.pages_unpublished, 40u);
    EXPECT_EQ(consumed.acks_sent, 10u);
    EXPECT_EQ(consumed.mapped_pages, 0u);
    // Generations grow with every commit: a recommitted page is told apart from its old self.
    for (std::size_t i = 1; i < generations.size(); ++i) {
        EXPECT_GT(generations[i], generations[i - 1]);
    }
}

TEST_F(PageShare, ALateConsumerGetsTheCurrentMap) {
    SharedRegionProducer producer(producer_backend_, small_region());
    commit_and_publish(producer, {7, 8, 9});
    const UnpublishTicket retiring = producer.unpublish(std::vector<PageIndex>{9});
    EXPECT_TRUE(producer.wait(retiring, 1s));  // no consumer to wait for
    producer.table().evict(std::vector<PageIndex>{9});
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    ASSERT_TRUE(poll_until(consumer, [&] { return consumer.pages().size() == 2; }));
    EXPECT_TRUE(consumer.lookup(7) && consumer.lookup(8));
    EXPECT_FALSE(consumer.lookup(9));
    EXPECT_TRUE(sees_stamps(consumer));
}

TEST_F(PageShare, PublishAndUnpublishRefuseWhatTheyCannotDo) {
    SharedRegionProducer producer(producer_backend_, small_region());
    EXPECT_ERRC(producer.publish(std::vector<PageIndex>{5}), Errc::not_mapped);
    commit_and_publish(producer, {5});
    EXPECT_ERRC(producer.publish(std::vector<PageIndex>{5}), Errc::invalid_argument);
    producer.table().commit(std::vector<PageIndex>{6});
    EXPECT_ERRC(producer.publish(std::vector<PageIndex>{6, 6}), Errc::invalid_argument);
    EXPECT_ERRC(producer.unpublish(std::vector<PageIndex>{6}), Errc::invalid_argument);
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    const UnpublishTicket ticket = producer.unpublish(std::vector<PageIndex>{5});
    EXPECT_ERRC(producer.publish(std::vector<PageIndex>{5}), Errc::busy);
    EXPECT_ERRC(producer.unpublish(std::vector<PageIndex>{5}), Errc::invalid_argument);
    ASSERT_TRUE(poll_until(consumer, [&] { return producer.wait(ticket, 0ms); }));
    // A failed publish pinned nothing: page 6 can still be evicted.
    producer.table().evict(std::vector<PageIndex>{6});
    EXPECT_EQ(producer.table().statistics().pinned_pages, 0u);
}

TEST_F(PageShare, AConsumerThatMissesItsLeaseIsRevoked) {
    auto settings = small_region();
    settings.ack_timeout = 200ms;
    SharedRegionProducer producer(producer_backend_, settings);
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    commit_and_publish(producer, {1, 2});
    consumer.poll(2s);
    ASSERT_EQ(consumer.pages().size(), 2u);

    // The consumer stops polling. The unpublish completes anyway, after the lease.
    const auto start = std::chrono::steady_clock::now();
    const UnpublishTicket ticket = producer.unpublish(std::vector<PageIndex>{1});
    EXPECT_TRUE(producer.wait(ticket, 5s));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
    producer.table().evict(std::vector<PageIndex>{1});
    auto stats = producer.statistics();
    EXPECT_EQ(stats.leases_expired, 1u);
    EXPECT_EQ(stats.consumers, 0u);

    // When it polls again it learns it was cut off, and holds nothing any more. (Each
    // consumer's messages are sent by a thread of its own: let the goodbye go out first.)
    EXPECT_TRUE(producer.flush(5s));
    EXPECT_ERRC(consumer.poll(1s), Errc::io_error);
    EXPECT_EQ(consumer.state(), ProducerState::revoked);
    EXPECT_TRUE(consumer.pages().empty());
    EXPECT_EQ(consumer.statistics().imported_pages, 0u);
    EXPECT_EQ(consumer.poll(10ms).messages, 0u);  // reported once
}

TEST_F(PageShare, AConsumerThatLeavesDoesNotHoldUpTheOthers) {
    SharedRegionProducer producer(producer_backend_, small_region());
    auto [first_end, first] = FdSocket::pair();
    auto [second_end, second] = FdSocket::pair();
    producer.add_consumer(std::move(first_end));
    producer.add_consumer(std::move(second_end));
    EXPECT_TRUE(producer.wait_for_consumers(2, 1s));
    auto leaving = std::make_unique<SharedRegionConsumer>(consumer_backend_, std::move(first),
                                                          quiet_consumer());
    SharedRegionConsumer staying(consumer_backend_, std::move(second), quiet_consumer());
    commit_and_publish(producer, {1, 2, 3});
    leaving->poll(2s);
    staying.poll(2s);
    leaving.reset();  // closes its socket with an unpublish about to come
    const UnpublishTicket ticket = producer.unpublish(std::vector<PageIndex>{2});
    ASSERT_TRUE(poll_until(staying, [&] { return producer.wait(ticket, 0ms); }));
    EXPECT_FALSE(staying.lookup(2));
    EXPECT_TRUE(producer.wait_for_consumers(1, 1s));
    EXPECT_EQ(producer.statistics().consumers_lost, 1u);
    commit_and_publish(producer, {4});
    ASSERT_TRUE(poll_until(staying, [&] { return staying.lookup(4).has_value(); }));
    EXPECT_TRUE(sees_stamps(staying));
}

TEST_F(PageShare, WhenTheProducerFinishesTheConsumerKeepsItsPages) {
    auto producer = std::make_unique<SharedRegionProducer>(producer_backend_, small_region());
    auto [mine, theirs] = FdSocket::pair();
    producer->add_consumer(std::move(mine));
    SharedRegionConsumer consumer(consumer_backend_, std::move(theirs), quiet_consumer());
    commit_and_publish(*producer, {10, 11});
    consumer.poll(2s);
    producer.reset();  // goodbye: finished
    EXPECT_NO_THROW(consumer.poll(2s));
    EXPECT_EQ(consumer.state(), ProducerState::finished);
    ASSERT_EQ(consumer.pages().size(), 2u);
    // The memory outlives the producer's table: the consumer's mappings hold it.
    EXPECT_TRUE(sees_stamps(consumer));
    EXPECT_EQ(producer_backend_.live_resources(), LiveResources{});
}

TEST_F(PageShare, ConsumersConnectThroughAListeningPath) {
    auto settings = small_region();
    settings.listen_path = testing::TempDir() + "vtpage-share-" + std::to_string(getpid());
    {
        SharedRegionProducer producer(producer_backend_, settings);
        commit_and_publish(producer, {0});
        SharedRegionConsumer consumer(consumer_backend_, FdSocket::connect(settings.listen_path),
                                      quiet_consumer());
        EXPECT_TRUE(producer.wait_for_consumers(1, 2s));
        ASSERT_TRUE(poll_until(consumer, [&] { return consumer.lookup(0).has_value(); }));
        EXPECT_TRUE(sees_stamps(consumer));
    }
    EXPECT_NE(access(settings.listen_path.c_str(), F_OK), 0) << "the socket file was left";
}

TEST_F(PageShare, ProducerNeedsExportablePages) {
    auto settings = small_region();
    settings.table.pool.page_options.exportable = false;
    EXPECT_ERRC(SharedRegionProducer(producer_backend_, settings), Errc::invalid_argument);
}

}  // namespace
}  // namespace vtpage
