// Page sharing against peers that attack it: a consumer that truncates or writes its page fds,
// peers that trickle bytes or announce huge messages, a user who is not allowed, a second
// producer on a live producer's path. Each test bounds its own duration.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "../support/expect_error.hpp"
#include "sharing/page_share_io.hpp"
#include "vtpage/backend/host_backend.hpp"
#include "vtpage/sharing/shared_region_consumer.hpp"
#include "vtpage/sharing/shared_region_producer.hpp"

namespace vtpage {
namespace {

using namespace sharing_detail;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

HostBackendSettings quiet_host() {
    HostBackendSettings settings;
    settings.log = Log(silent_log());
    return settings;
}

SharedRegionProducerSettings region(std::chrono::milliseconds io_timeout) {
    SharedRegionProducerSettings settings;
    settings.table.region_size = 16 * 2_MiB;
    settings.table.budget_bytes = 8 * 2_MiB;
    settings.ack_timeout = 1s;  // the raw consumers here never acknowledge
    settings.io_timeout = io_timeout;
    settings.log = Log(silent_log());
    return settings;
}

// FdSocket's frame header, written by hand as a hostile peer would.
struct RawHeader {
    std::uint32_t magic = 0x76747066;
    std::uint32_t fd_count = 0;
    std::uint64_t byte_count = 0;
};

void send_raw(const FdSocket& socket, const void* data, std::size_t size) {
    ASSERT_EQ(::send(socket.fd(), data, size, MSG_NOSIGNAL), static_cast<ssize_t>(size));
}

// Waits until the producer has lost `count` consumers; how long that took.
Clock::duration wait_for_losses(const SharedRegionProducer& producer, std::uint64_t count,
                                Clock::duration limit) {
    const auto start = Clock::now();
    while (producer.statistics().consumers_lost < count && Clock::now() - start < limit) {
        std::this_thread::sleep_for(10ms);
    }
    return Clock::now() - start;
}

std::string private_directory() {
    std::string pattern = testing::TempDir() + "vtpage-hostile-XXXXXX";
    if (!mkdtemp(pattern.data())) ADD_FAILURE() << "mkdtemp failed";
    return pattern;
}

class PageShareHostile : public testing::Test {
protected:
    void commit_and_publish(SharedRegionProducer& producer, std::vector<PageIndex> pages) {
        producer.table().commit(pages);
        for (PageIndex page : pages) {
            const std::uint64_t word = page + 1;
            producer_backend_.write(producer.table().address_of(page), &word, sizeof(word));
        }
        producer.publish(pages);
    }

    HostBackend producer_backend_{quiet_host()};
    HostBackend consumer_backend_{quiet_host()};
};

// A consumer holding a page's fd can neither shrink it (which SIGBUSed the producer) nor get
// write access to it by any route; the producer keeps writing it.
TEST_F(PageShareHostile, AConsumerCannotTruncateOrWriteItsPages) {
    SharedRegionProducer producer(producer_backend_, region(5s));
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    commit_and_publish(producer, {2});
    const auto deadline = Clock::now() + 5s;
    ASSERT_EQ(receive_message(theirs, deadline, 1 << 20).message.type, ShareMessageType::hello);
    ReceivedMessage pages = receive_message(theirs, deadline, 1 << 20);
    ASSERT_EQ(pages.message.type, ShareMessageType::pages);
    ASSERT_EQ(pages.fds.size(), 1u);
    const int fd = pages.fds[0].get();

    EXPECT_NE(::ftruncate(fd, 0), 0) << "the consumer shrank the page";
    EXPECT_EQ(::mmap(nullptr, 2_MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED)
        << "the consumer mapped the page writable";
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    UniqueFd reopened(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (reopened) {  // memfds may be reopened, but the seal refuses every write through it
        const char byte = 1;
        EXPECT_LT(::pwrite(reopened.get(), &byte, 1, 0), 0) << "a write through /proc went in";
        EXPECT_EQ(::ftruncate(reopened.get(), 0), -1);
        EXPECT_EQ(::mmap(nullptr, 2_MiB, PROT_READ | PROT_WRITE, MAP_SHARED, reopened.get(), 0),
                  MAP_FAILED);
    }
    // The producer still writes its page, and recycles it for another page (a new mapping of
    // the same sealed memory) without faulting.
    const std::uint64_t word = 42;
    producer_backend_.write(producer.table().address_of(2), &word, sizeof(word));
    void* reader = ::mmap(nullptr, 2_MiB, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(reader, MAP_FAILED);
    EXPECT_EQ(*static_cast<const std::uint64_t*>(reader), 42u);
    ::munmap(reader, 2_MiB);
    producer.evict(std::array<PageIndex, 1>{2});
    commit_and_publish(producer, {3, 4, 5});
}

// A consumer that stops reading (its socket buffer full) delays neither publish() nor the
// consumer that reads.
TEST_F(PageShareHostile, AStalledConsumerDelaysNeitherPublishNorTheOthers) {
    auto settings = region(30s);
    settings.table.region_size = 64 * 2_MiB;
    settings.table.budget_bytes = 64 * 2_MiB;
    SharedRegionProducer producer(producer_backend_, settings);
    auto [stalled_mine, stalled] = FdSocket::pair();
    const int small = 1;  // the kernel's minimum: a few messages fill it
    ::setsockopt(stalled_mine.fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    ::setsockopt(stalled.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    producer.add_consumer(std::move(stalled_mine));
    auto [good_mine, good_end] = FdSocket::pair();
    producer.add_consumer(std::move(good_mine));
    SharedRegionConsumerSettings consumer_settings;
    consumer_settings.log = Log(silent_log());
    SharedRegionConsumer good(consumer_backend_, std::move(good_end), consumer_settings);

    Clock::duration slowest{};
    for (PageIndex page = 0; page < 64; ++page) {
        producer.table().commit(std::array<PageIndex, 1>{page});
        const auto start = Clock::now();
        producer.publish(std::array<PageIndex, 1>{page});
        slowest = std::max(slowest, Clock::now() - start);
    }
    EXPECT_LT(slowest, 500ms) << "publish waited for the consumer that does not read";
    const auto deadline = Clock::now() + 5s;
    while (good.pages().size() < 64 && Clock::now() < deadline) good.poll(10ms);
    EXPECT_EQ(good.pages().size(), 64u) << "the reading consumer was held up";
    stalled = FdSocket();  // its writer thread fails at once, so the producer ends promptly
}

// A producer's huge frame header is refused by its size, before anything is allocated.
TEST_F(PageShareHostile, AHugeFrameIsRefusedBySize) {
    auto [left, right] = FdSocket::pair();
    RawHeader header;
    header.byte_count = std::uint64_t(1) << 30;
    send_raw(left, &header, sizeof(header));
    const auto start = Clock::now();
    EXPECT_ERRC(right.receive(Clock::now() + 10s, 4096), Errc::corrupt_data);
    EXPECT_LT(Clock::now() - start, 1s) << "it waited for the body instead of refusing it";
}

// A consumer that announces a huge message is dropped at once, and the producer goes on.
TEST_F(PageShareHostile, AConsumerAnnouncingAHugeFrameIsDropped) {
    SharedRegionProducer producer(producer_backend_, region(10s));
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    RawHeader header;
    header.byte_count = std::uint64_t(1) << 30;
    send_raw(theirs, &header, sizeof(header));
    EXPECT_LT(wait_for_losses(producer, 1, 5s), 2s);
    EXPECT_EQ(producer.statistics().consumers_lost, 1u);
    commit_and_publish(producer, {1});
}

// A consumer that trickles a message, one byte at a time, is dropped at the message's
// deadline (not at a per-byte timeout it keeps renewing).
TEST_F(PageShareHostile, ATricklingConsumerIsDroppedAtItsDeadline) {
    SharedRegionProducer producer(producer_backend_, region(400ms));
    auto [mine, theirs] = FdSocket::pair();
    producer.add_consumer(std::move(mine));
    std::atomic<bool> stop{false};
    std::thread trickler([&, &socket = theirs] {
        RawHeader header;
        header.byte_count = 100;
        const auto* bytes = reinterpret_cast<const char*>(&header);
        for (std::size_t i = 0; i < sizeof(header) + 100 && !stop; ++i) {
            const char byte = i < sizeof(header) ? bytes[i] : 0;
            if (::send(socket.fd(), &byte, 1, MSG_NOSIGNAL) != 1) break;
            std::this_thread::sleep_for(50ms);
        }
    });
    const auto took = wait_for_losses(producer, 1, 5s);
    stop = true;
    trickler.join();
    EXPECT_EQ(producer.statistics().consumers_lost, 1u);
    EXPECT_LT(took, 2s) << "the trickle stretched the deadline";
}

// A producer that trickles its hello cannot hold the consumer past io_timeout.
TEST_F(PageShareHostile, ATricklingProducerCannotHoldTheConsumer) {
    auto [producer_end, consumer_end] = FdSocket::pair();
    std::atomic<bool> stop{false};
    std::thread trickler([&, &socket = producer_end] {
        RawHeader header;
        header.byte_count = 200;
        const auto* bytes = reinterpret_cast<const char*>(&header);
        for (std::size_t i = 0; i < sizeof(header) + 200 && !stop; ++i) {
            const char byte = i < sizeof(header) ? bytes[i] : 0;
            if (::send(socket.fd(), &byte, 1, MSG_NOSIGNAL) != 1) break;
            std::this_thread::sleep_for(50ms);
        }
    });
    SharedRegionConsumerSettings settings;
    settings.io_timeout = 400ms;
    settings.log = Log(silent_log());
    const auto start = Clock::now();
    EXPECT_ERRC(SharedRegionConsumer(consumer_backend_, std::move(consumer_end), settings),
                Errc::io_error);
    EXPECT_LT(Clock::now() - start, 2s);
    stop = true;
    trickler.join();
}

// A producer whose region passes the consumer's limit (2^47 bytes) is refused with a message
// that names that limit, not the page size (which is right).
TEST_F(PageShareHostile, ARegionPastTheLimitIsRefusedNamingTheLimit) {
    auto [producer_end, consumer_end] = FdSocket::pair();
    ShareMessage hello;
    hello.type = ShareMessageType::hello;
    hello.hello.backend = consumer_backend_.name();
    hello.hello.page_size = consumer_backend_.granularity().minimum;
    hello.hello.page_count = (std::uint64_t(1) << 47) / hello.hello.page_size + 1;
    hello.hello.producer_pid = std::uint32_t(::getpid());
    send_message(producer_end, hello, {}, ShareClock::now() + 1s);
    SharedRegionConsumerSettings settings;
    settings.io_timeout = 1s;
    settings.log = Log(silent_log());
    try {
        SharedRegionConsumer consumer(consumer_backend_, std::move(consumer_end), settings);
        ADD_FAILURE() << "a region of 2^47 bytes and a page was accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::not_supported);
        const std::string message = error.what();
        EXPECT_NE(message.find("region limit"), std::string::npos) << message;
        EXPECT_EQ(message.find("this backend's pages have"), std::string::npos) << message;
    }
}

// A second producer on a live producer's path is refused, and leaves its socket alone; the
// first one's exit does not remove a socket that another producer put there since.
TEST_F(PageShareHostile, ASecondProducerCannotHijackALivePath) {
    const std::string directory = private_directory();
    auto settings = region(5s);
    settings.listen_path = directory + "/pages.sock";
    {
        SharedRegionProducer first(producer_backend_, settings);
        HostBackend other_backend{quiet_host()};
        EXPECT_ERRC(SharedRegionProducer(other_backend, settings), Errc::busy);
        struct stat status {};
        ASSERT_EQ(::lstat(settings.listen_path.c_str(), &status), 0) << "the socket was removed";
        FdSocket client = FdSocket::connect(settings.listen_path);
        EXPECT_TRUE(first.wait_for_consumers(1, 5s)) << "the first producer lost its socket";
        // Someone replaces the file meanwhile (here: by hand); the first must not unlink it.
        ::unlink(settings.listen_path.c_str());
        FdSocket replacement = FdSocket::listen(settings.listen_path);
    }
    struct stat status {};
    EXPECT_EQ(::lstat(settings.listen_path.c_str(), &status), 0)
        << "the first producer removed a socket that was not its own";
    ::unlink(settings.listen_path.c_str());
    ::rmdir(directory.c_str());
}

// A process of another user is refused by the producer (SO_PEERCRED), whatever the socket
// file's mode lets it do.
TEST_F(PageShareHostile, APeerOfAnotherUserIsRefused) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "switching to another user (nobody) needs root; this runs as uid "
                     << ::geteuid();
    }
    const std::string directory = private_directory();
    ::chmod(directory.c_str(), 0777);
    auto settings = region(5s);
    settings.listen_path = directory + "/pages.sock";
    SharedRegionProducer producer(producer_backend_, settings);
    commit_and_publish(producer, {0});
    ::chmod(settings.listen_path.c_str(), 0777);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Exit 0: refused (EOF, no fds); 1: it was given something; 2: could not try.
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
        int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::snprintf(address.sun_path, sizeof(address.sun_path), "%s",
                      settings.listen_path.c_str());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
            ::_exit(2);
        }
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        ::_exit(n <= 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "user nobody was served (2: could not connect)";
    EXPECT_EQ(producer.statistics().consumers_joined, 0u);
}

}  // namespace
}  // namespace vtpage
