// The page-sharing protocol's messages, and a consumer facing a producer that breaks them.
#include <gtest/gtest.h>
#include <unistd.h>

#include "../support/expect_error.hpp"
#include "sharing/page_share_protocol.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/sharing/shared_region_consumer.hpp"

namespace vtpage {
namespace {

using namespace sharing_detail;
using namespace std::chrono_literals;

ShareMessage hello_for(const Backend& backend, std::uint64_t pages = 8) {
    ShareMessage message;
    message.type = ShareMessageType::hello;
    message.sequence = 1;
    message.hello.page_size = 2_MiB;
    message.hello.page_count = pages;
    message.hello.producer_pid = static_cast<std::uint32_t>(getpid());
    message.hello.backend = std::string(backend.name());
    return message;
}

void send(const FdSocket& socket, const ShareMessage& message, std::span<const int> fds = {}) {
    socket.send(encode(message), fds);
}

TEST(PageShareProtocol, EveryMessageSurvivesItsEncoding) {
    ShareMessage hello;
    hello.type = ShareMessageType::hello;
    hello.sequence = 42;
    hello.hello = {2_MiB, 1u << 20, 1234, 1, "cuda"};
    ShareMessage back = decode(encode(hello));
    EXPECT_EQ(back.type, ShareMessageType::hello);
    EXPECT_EQ(back.sequence, 42u);
    EXPECT_EQ(back.hello.page_size, 2_MiB);
    EXPECT_EQ(back.hello.page_count, 1u << 20);
    EXPECT_EQ(back.hello.producer_pid, 1234u);
    EXPECT_EQ(back.hello.device, 1);
    EXPECT_EQ(back.hello.backend, "cuda");

    ShareMessage publish;
    publish.type = ShareMessageType::publish;
    publish.updates = {{1, 2, 3}, {std::uint64_t(1) << 40, 5, std::uint64_t(1) << 50}};
    back = decode(encode(publish));
    ASSERT_EQ(back.updates.size(), 2u);
    EXPECT_EQ(back.updates[1].page, std::uint64_t(1) << 40);
    EXPECT_EQ(back.updates[1].physical_id, 5u);
    EXPECT_EQ(back.updates[1].generation, std::uint64_t(1) << 50);

    ShareMessage unpublish;
    unpublish.type = ShareMessageType::unpublish;
    unpublish.updates = {{7, 0, 9}};
    back = decode(encode(unpublish));
    ASSERT_EQ(back.updates.size(), 1u);
    EXPECT_EQ(back.updates[0].page, 7u);
    EXPECT_EQ(back.updates[0].generation, 9u);

    ShareMessage forget;
    forget.type = ShareMessageType::forget;
    forget.physical_ids = {4, 5, 6};
    EXPECT_EQ(decode(encode(forget)).physical_ids, forget.physical_ids);

    ShareMessage goodbye;
    goodbye.type = ShareMessageType::goodbye;
    goodbye.reason = GoodbyeReason::revoked;
    EXPECT_EQ(decode(encode(goodbye)).reason, GoodbyeReason::revoked);
}

TEST(PageShareProtocol, MalformedMessagesAreCorruptData) {
    ShareMessage publish;
    publish.type = ShareMessageType::publish;
    publish.updates = {{1, 2, 3}, {4, 5, 6}};
    auto bytes = encode(publish);
    // Every truncation is caught, wherever it cuts.
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        EXPECT_ERRC(decode(std::span(bytes).first(size)), Errc::corrupt_data);
    }
    auto longer = bytes;
    longer.push_back(std::byte{0});
    EXPECT_ERRC(decode(longer), Errc::corrupt_data);
    auto bad_magic = bytes;
    bad_magic[0] = std::byte{0};
    EXPECT_ERRC(decode(bad_magic), Errc::corrupt_data);
    auto bad_type = bytes;
    bad_type[6] = std::byte{99};
    EXPECT_ERRC(decode(bad_type), Errc::corrupt_data);
    auto huge_count = bytes;
    huge_count[16] = std::byte{0xff};
    huge_count[17] = std::byte{0xff};
    EXPECT_ERRC(decode(huge_count), Errc::corrupt_data);
    auto other_version = bytes;
    other_version[4] = std::byte{2};
    EXPECT_ERRC(decode(other_version), Errc::not_supported);
}

class PageShareConsumerAgainstABadProducer : public testing::Test {
protected:
    HostBackend backend_{[] {
        HostBackendSettings settings;
        settings.log = Log(silent_log());
        return settings;
    }()};
    SharedRegionConsumerSettings settings_ = [] {
        SharedRegionConsumerSettings settings;
        settings.io_timeout = 500ms;
        settings.log = Log(silent_log());
        return settings;
    }();
};

TEST_F(PageShareConsumerAgainstABadProducer, SilenceGarbageAndMismatchesAreTypedErrors) {
    {
        auto [producer, consumer] = FdSocket::pair();
        EXPECT_ERRC(SharedRegionConsumer(backend_, std::move(consumer), settings_),
                    Errc::io_error);  // says nothing
    }
    {
        auto [producer, consumer] = FdSocket::pair();
        const char garbage[] = "not a hello";
        producer.send(std::as_bytes(std::span(garbage)));
        EXPECT_ERRC(SharedRegionConsumer(backend_, std::move(consumer), settings_),
                    Errc::corrupt_data);
    }
    {
        auto [producer, consumer] = FdSocket::pair();
        ShareMessage hello = hello_for(backend_);
        hello.hello.backend = "cuda";
        send(producer, hello);
        EXPECT_ERRC(SharedRegionConsumer(backend_, std::move(consumer), settings_),
                    Errc::not_supported);
    }
    {
        auto [producer, consumer] = FdSocket::pair();
        ShareMessage hello = hello_for(backend_);
        hello.hello.page_size = 64_KiB;
        send(producer, hello);
        EXPECT_ERRC(SharedRegionConsumer(backend_, std::move(consumer), settings_),
                    Errc::not_supported);
    }
    EXPECT_EQ(backend_.live_resources(), LiveResources{});
}

TEST_F(PageShareConsumerAgainstABadProducer, BrokenPromisesUnmapEverything) {
    auto [producer, consumer_end] = FdSocket::pair();
    send(producer, hello_for(backend_));
    SharedRegionConsumer consumer(backend_, std::move(consumer_end), settings_);
    // A real page, published properly.
    PhysicalHandle page = backend_.create(2_MiB);
    UniqueFd fd = backend_.export_fd(page);
    ShareMessage pages;
    pages.type = ShareMessageType::pages;
    pages.sequence = 2;
    pages.physical_ids = {1};
    int fds[] = {fd.get()};
    send(producer, pages, fds);
    ShareMessage publish;
    publish.type = ShareMessageType::publish;
    publish.sequence = 3;
    publish.updates = {{5, 1, 77}};
    send(producer, publish);
    auto update = consumer.poll(1s);
    ASSERT_EQ(update.published.size(), 1u);
    EXPECT_EQ(consumer.lookup(5)->generation, 77u);
    // Then a page whose fd never came.
    publish.sequence = 4;
    publish.updates = {{6, 2, 78}};
    send(producer, publish);
    EXPECT_ERRC(consumer.poll(1s), Errc::corrupt_data);
    EXPECT_EQ(consumer.state(), ProducerState::revoked);
    EXPECT_TRUE(consumer.pages().empty());
    EXPECT_EQ(consumer.statistics().imported_pages, 0u);
    backend_.release(page);
}

TEST_F(PageShareConsumerAgainstABadProducer, UnpublishOfAnotherGenerationIsRefused) {
    auto [producer, consumer_end] = FdSocket::pair();
    send(producer, hello_for(backend_));
    SharedRegionConsumer consumer(backend_, std::move(consumer_end), settings_);
    PhysicalHandle page = backend_.create(2_MiB);
    UniqueFd fd = backend_.export_fd(page);
    ShareMessage pages;
    pages.type = ShareMessageType::pages;
    pages.physical_ids = {1};
    int fds[] = {fd.get()};
    send(producer, pages, fds);
    ShareMessage publish;
    publish.type = ShareMessageType::publish;
    publish.updates = {{2, 1, 10}};
    send(producer, publish);
    ShareMessage unpublish;
    unpublish.type = ShareMessageType::unpublish;
    unpublish.updates = {{2, 0, 11}};
    send(producer, unpublish);
    EXPECT_ERRC(consumer.poll(1s), Errc::corrupt_data);
    EXPECT_TRUE(consumer.pages().empty());
    backend_.release(page);
}

}  // namespace
}  // namespace vtpage
