#include "vtpage/streaming/io/file_read_queue.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../support/eventually.hpp"
#include "../support/expect_error.hpp"
#include "../support/open_descriptors.hpp"
#include "../support/process_threads.hpp"
#include "../support/temporary_folder.hpp"
#include "streaming/io/fault_injecting_file_layer.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage::vt {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::size_t mib = 1024 * 1024;

// A file of pseudo-random bytes, open for reading.
class RandomFile {
public:
    RandomFile(std::size_t size, std::uint64_t seed) : path_(folder_.file("pages.bin")) {
        std::mt19937_64 random(seed);
        bytes_.resize(size);
        for (std::byte& byte : bytes_) byte = std::byte(random() & 0xff);
        UniqueFd out(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (!out || ::write(out.get(), bytes_.data(), size) != ssize_t(size)) {
            throw std::runtime_error("cannot write the test file");
        }
        fd_ = UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    }
    int fd() const { return fd_.get(); }
    const std::string& path() const { return path_; }
    const std::vector<std::byte>& bytes() const { return bytes_; }
    bool holds(std::uint64_t offset, const std::vector<std::byte>& read) const {
        return std::equal(read.begin(), read.end(), bytes_.begin() + std::ptrdiff_t(offset));
    }

private:
    test::TemporaryFolder folder_;
    std::string path_;
    std::vector<std::byte> bytes_;
    UniqueFd fd_;
};

// A read to make and the memory it goes to; the tag is its index.
struct Planned {
    std::uint64_t offset = 0;
    std::vector<std::byte> destination;
};

// 2 MiB pages at 4 KiB boundaries and odd sizes at odd offsets, all inside the file.
std::vector<Planned> random_reads(std::size_t count, std::size_t file_bytes, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<Planned> reads(count);
    for (std::size_t i = 0; i < count; ++i) {
        const bool page = i % 5 == 0;
        const std::size_t size = page ? 2 * mib : 1 + random() % 300'000;
        const std::uint64_t span = file_bytes - size;
        reads[i].offset = page ? random() % (span / 4096 + 1) * 4096 : random() % (span + 1);
        reads[i].destination.assign(size, std::byte{0xab});
    }
    return reads;
}

std::vector<ReadTicket> submit_all(FileReadQueue& queue, int fd, std::vector<Planned>& reads) {
    std::vector<ReadTicket> tickets;
    for (std::size_t i = 0; i < reads.size(); ++i) {
        tickets.push_back(queue.submit({fd, reads[i].offset, reads[i].destination, i}));
    }
    return tickets;
}

// Every completion up to `count` (30 s at most), by tag.
std::map<std::uint64_t, ReadCompletion> wait_all(FileReadQueue& queue, std::size_t count) {
    std::map<std::uint64_t, ReadCompletion> all;
    const auto deadline = Clock::now() + 30s;
    while (all.size() < count && Clock::now() < deadline) {
        for (ReadCompletion& done : queue.wait(count - all.size(), 1s)) {
            EXPECT_TRUE(all.emplace(done.tag, std::move(done)).second) << "two completions";
        }
    }
    EXPECT_EQ(all.size(), count);
    return all;
}

using test::eventually;
using test::thread_count;
constexpr std::size_t runtime_threads = test::sanitizer_runtime_threads;

std::string backend_name(const testing::TestParamInfo<FileReadBackend>& param) {
    return std::string(to_string(param.param));
}

class FileReadQueueTest : public testing::TestWithParam<FileReadBackend> {
protected:
    void SetUp() override {
        if (GetParam() != FileReadBackend::io_uring) return;
        const std::string reason = FileReadQueue::io_uring_unavailable_reason();
        if (!reason.empty()) GTEST_SKIP() << "no io_uring here: " << reason;
    }
    std::unique_ptr<FileReadQueue> make_queue(FileReadQueueSettings settings = {}) {
        settings.backend = GetParam();
        if (!settings.log.callback()) settings.log = Log(silent_log());
        auto queue = std::make_unique<FileReadQueue>(std::move(settings));
        EXPECT_EQ(queue->backend(), GetParam());
        return queue;
    }
};

TEST_P(FileReadQueueTest, RandomRangesArriveByteForByte) {
    const RandomFile file(6 * mib + 12'345, 11);
    std::vector<Planned> reads = random_reads(200, file.bytes().size(), 12);
    auto queue = make_queue({.depth = 32});
    submit_all(*queue, file.fd(), reads);
    const auto done = wait_all(*queue, reads.size());
    for (const auto& [tag, completion] : done) {
        ASSERT_EQ(completion.status, ReadStatus::ok) << completion.message;
        EXPECT_EQ(completion.bytes, reads[tag].destination.size());
        EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination)) << "read " << tag;
    }
    const FileReadStatistics statistics = queue->statistics();
    EXPECT_EQ(statistics.submitted, 200u);
    EXPECT_EQ(statistics.issued, 200u);
    EXPECT_EQ(statistics.completed_ok, 200u);
    EXPECT_LE(statistics.max_in_flight, 32u);
    EXPECT_GE(statistics.max_in_flight, 1u);
    EXPECT_EQ(statistics.in_flight_now, 0u);
    std::uint64_t bytes = 0;
    for (const Planned& read : reads) bytes += read.destination.size();
    EXPECT_EQ(statistics.bytes_read, bytes);
}

TEST_P(FileReadQueueTest, ShortReadsEagainAndEintrEndWithTheRightBytes) {
    const RandomFile file(4 * mib, 21);
    std::vector<Planned> reads = random_reads(100, file.bytes().size(), 22);
    FaultInjectingFileLayer faults(
        {.seed = 23, .short_read_every = 2, .eagain_every = 7, .eintr_every = 5});
    auto queue = make_queue({.depth = 16, .layer = &faults});
    submit_all(*queue, file.fd(), reads);
    for (const auto& [tag, completion] : wait_all(*queue, reads.size())) {
        ASSERT_EQ(completion.status, ReadStatus::ok) << completion.message;
        EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination)) << "read " << tag;
    }
    const FileReadStatistics statistics = queue->statistics();
    EXPECT_GT(statistics.continued, 20u);
    EXPECT_GT(statistics.retries, 10u);
    EXPECT_EQ(statistics.completed_ok, 100u);
    EXPECT_EQ(statistics.failed, 0u);
}

TEST_P(FileReadQueueTest, EioFailsTheChosenReadOnly) {
    const RandomFile file(2 * mib, 31);
    std::vector<Planned> reads(20);
    for (std::size_t i = 0; i < reads.size(); ++i) {
        reads[i] = {i * 65536, std::vector<std::byte>(65536)};
    }
    FaultInjectingFileLayer faults;
    faults.fail_at(file.fd(), 5 * 65536, EIO);
    auto queue = make_queue({.depth = 8, .layer = &faults});
    submit_all(*queue, file.fd(), reads);
    for (const auto& [tag, completion] : wait_all(*queue, reads.size())) {
        if (tag != 5) {
            EXPECT_EQ(completion.status, ReadStatus::ok) << completion.message;
            EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination));
            continue;
        }
        EXPECT_EQ(completion.status, ReadStatus::failed);
        EXPECT_EQ(completion.error, EIO);
        EXPECT_NE(completion.message.find("EIO"), std::string::npos) << completion.message;
        EXPECT_NE(completion.message.find("offset 327680"), std::string::npos)
            << completion.message;
    }
    EXPECT_EQ(queue->statistics().failed, 1u);
}

TEST_P(FileReadQueueTest, EagainThatNeverStopsFailsAfterBoundedRetries) {
    const RandomFile file(mib, 41);
    FaultInjectingFileLayer faults;
    faults.fail_at(file.fd(), 4096, EAGAIN, 0);
    auto queue = make_queue({.layer = &faults});
    std::vector<std::byte> destination(8192);
    queue->submit({file.fd(), 4096, destination, 7});
    const auto done = wait_all(*queue, 1);
    ASSERT_EQ(done.count(7), 1u);
    EXPECT_EQ(done.at(7).status, ReadStatus::failed);
    EXPECT_EQ(done.at(7).error, EAGAIN);
    EXPECT_NE(done.at(7).message.find("64 times in a row"), std::string::npos)
        << done.at(7).message;
    EXPECT_EQ(queue->statistics().retries, file_read_max_retries);
}

TEST_P(FileReadQueueTest, AFileTruncatedWhileReadsWaitFailsThosePastItsNewEnd) {
    RandomFile file(4 * mib, 51);
    std::vector<Planned> reads(16);
    for (std::size_t i = 0; i < reads.size(); ++i) {
        reads[i] = {i * 256 * 1024, std::vector<std::byte>(256 * 1024)};
    }
    FaultInjectingFileLayer faults;
    faults.hold();
    auto queue = make_queue({.depth = 1, .layer = &faults});
    submit_all(*queue, file.fd(), reads);
    ASSERT_TRUE(eventually([&] { return faults.held() == 1; }));
    constexpr std::uint64_t new_end = 2 * mib + 100'000;
    UniqueFd writer(::open(file.path().c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(::ftruncate(writer.get(), off_t(new_end)), 0);
    faults.release();
    for (const auto& [tag, completion] : wait_all(*queue, reads.size())) {
        const std::uint64_t end = reads[tag].offset + reads[tag].destination.size();
        if (end <= new_end) {
            EXPECT_EQ(completion.status, ReadStatus::ok) << completion.message;
            EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination));
            continue;
        }
        EXPECT_EQ(completion.status, ReadStatus::failed) << "read " << tag;
        const std::uint64_t ends_at = std::max(new_end, reads[tag].offset);
        EXPECT_NE(completion.message.find("the file ends at byte " + std::to_string(ends_at)),
                  std::string::npos)
            << completion.message;
        EXPECT_EQ(completion.bytes, ends_at - reads[tag].offset);
    }
}

TEST_P(FileReadQueueTest, CancelTakesBackWhatWasNotIssuedAndLeavesItsMemoryAlone) {
    const RandomFile file(mib, 61);
    std::vector<Planned> reads(10);
    for (std::size_t i = 0; i < reads.size(); ++i) {
        reads[i] = {i * 8192, std::vector<std::byte>(4096, std::byte{0xab})};
    }
    FaultInjectingFileLayer faults;
    faults.hold();
    auto queue = make_queue({.depth = 1, .layer = &faults});
    const std::vector<ReadTicket> tickets = submit_all(*queue, file.fd(), reads);
    ASSERT_TRUE(eventually([&] { return faults.held() == 1; }));  // the first is issued
    EXPECT_FALSE(queue->cancel(tickets[0]));
    for (std::size_t i = 1; i < reads.size(); i += 2) EXPECT_TRUE(queue->cancel(tickets[i]));
    EXPECT_FALSE(queue->cancel(tickets[1]));  // once only
    faults.release();
    for (const auto& [tag, completion] : wait_all(*queue, reads.size())) {
        const std::vector<std::byte> sentinel(4096, std::byte{0xab});
        if (tag % 2 == 1) {
            EXPECT_EQ(completion.status, ReadStatus::cancelled);
            EXPECT_EQ(reads[tag].destination, sentinel) << "a cancelled read wrote " << tag;
        } else {
            EXPECT_EQ(completion.status, ReadStatus::ok) << completion.message;
            EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination));
        }
        EXPECT_EQ(completion.cancel_requested, tag == 0);
        EXPECT_EQ(completion.ticket, tickets[tag]);
    }
    const FileReadStatistics statistics = queue->statistics();
    EXPECT_EQ(statistics.cancelled, 5u);
    EXPECT_EQ(statistics.completed_ok, 5u);
    EXPECT_EQ(statistics.issued, 5u);
}

TEST_P(FileReadQueueTest, AFullQueueIsBusyAndLosesNothing) {
    const RandomFile file(mib, 71);
    std::vector<Planned> reads(6);
    for (std::size_t i = 0; i < reads.size(); ++i) {
        reads[i] = {i * 4096, std::vector<std::byte>(4096)};
    }
    FaultInjectingFileLayer faults;
    faults.hold();
    auto queue = make_queue({.depth = 1, .max_queued = 4, .layer = &faults});
    for (std::size_t i = 0; i < 5; ++i) {
        queue->submit({file.fd(), reads[i].offset, reads[i].destination, i});
        if (i == 0) {
            ASSERT_TRUE(eventually([&] { return faults.held() == 1; }));  // issued, not queued
        }
    }
    EXPECT_ERRC_WITH_OPERATION(queue->submit({file.fd(), reads[5].offset, reads[5].destination, 5}),
                               Errc::busy);
    EXPECT_EQ(queue->statistics().queued_now, 4u);
    faults.release();
    for (const auto& [tag, completion] : wait_all(*queue, 5)) {
        EXPECT_EQ(completion.status, ReadStatus::ok) << completion.message;
        EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination));
    }
    queue->submit({file.fd(), reads[5].offset, reads[5].destination, 5});  // room again
    EXPECT_EQ(wait_all(*queue, 1).at(5).status, ReadStatus::ok);
    const FileReadStatistics statistics = queue->statistics();
    EXPECT_EQ(statistics.submitted, 6u);
    EXPECT_EQ(statistics.submitted,
              statistics.completed_ok + statistics.failed + statistics.cancelled);
    EXPECT_EQ(statistics.queued_peak, 4u);
    EXPECT_EQ(statistics.queued_now, 0u);
}

TEST_P(FileReadQueueTest, BadRequestsAreTypedErrors) {
    auto queue = make_queue();
    std::vector<std::byte> destination(16);
    EXPECT_ERRC_WITH_OPERATION(queue->submit({-1, 0, destination, 0}), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(queue->submit({0, 0, {}, 0}), Errc::invalid_argument);
    EXPECT_ERRC(FileReadQueue({.depth = 0, .backend = GetParam()}), Errc::invalid_argument);
    EXPECT_EQ(queue->statistics().submitted, 0u);
}

TEST_P(FileReadQueueTest, DirectReadsOutOfAlignmentFailWithEinval) {
    const RandomFile file(mib, 81);
    UniqueFd direct(::open(file.path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!direct) GTEST_SKIP() << "the temporary folder's filesystem refuses O_DIRECT";
    auto queue = make_queue();
    std::vector<std::byte> misaligned(4096);
    std::unique_ptr<std::byte, decltype(&std::free)> aligned(
        static_cast<std::byte*>(std::aligned_alloc(4096, 65536)), &std::free);
    queue->submit({direct.get(), 100, misaligned, 1});
    queue->submit({direct.get(), 4096, {aligned.get(), 65536}, 2});
    const auto done = wait_all(*queue, 2);
    EXPECT_EQ(done.at(1).status, ReadStatus::failed);
    EXPECT_EQ(done.at(1).error, EINVAL);
    EXPECT_NE(done.at(1).message.find("aligned to 4096"), std::string::npos) << done.at(1).message;
    ASSERT_EQ(done.at(2).status, ReadStatus::ok) << done.at(2).message;
    EXPECT_TRUE(std::equal(aligned.get(), aligned.get() + 65536, file.bytes().begin() + 4096));
}

TEST_P(FileReadQueueTest, DestroyedQueuesLeaveNoDescriptorsOrThreads) {
    const RandomFile file(4 * mib, 91);
    const std::size_t descriptors = test::open_descriptor_count();
    const std::size_t threads = thread_count();
    for (int round = 0; round < 3; ++round) {
        std::vector<Planned> reads = random_reads(40, file.bytes().size(), 92 + round);
        auto queue = make_queue({.depth = 8});
        submit_all(*queue, file.fd(), reads);
        queue->wait(5, 10s);
        EXPECT_GT(thread_count(), threads);
    }  // destroyed with reads queued and in flight
    EXPECT_EQ(test::open_descriptor_count(), descriptors);
    EXPECT_LE(thread_count(), threads + runtime_threads);
}

// Each attempt takes 200 ms (30 of them, 4 at a time, take 1.5 s: long enough that the queue is
// destroyed with reads not yet issued, even on a loaded machine); counts the attempts under way.
class SlowLayer : public FileLayer {
public:
    ReadDecision decide(const ReadAttempt&) override {
        ++active;
        std::this_thread::sleep_for(200ms);
        ++decided;
        --active;
        return ReadDecision::pass();
    }
    std::atomic<int> active{0};
    std::atomic<int> decided{0};
};

TEST_P(FileReadQueueTest, DestructionWaitsForTheReadsInFlight) {
    const RandomFile file(mib, 101);
    std::vector<Planned> reads = random_reads(30, file.bytes().size(), 102);
    SlowLayer slow;
    const auto start = Clock::now();
    {
        auto queue = make_queue({.depth = 4, .layer = &slow});
        submit_all(*queue, file.fd(), reads);
        ASSERT_TRUE(eventually([&] { return slow.active > 0; }));
    }
    EXPECT_LT(Clock::now() - start, 5s);
    EXPECT_EQ(slow.active, 0);  // nothing runs in the layer after the queue has gone
    EXPECT_GE(slow.decided, 1);
    EXPECT_LT(slow.decided, 30);  // what was not issued was cancelled, not read
}

// Says when a read has been made (by pread, or by the kernel for io_uring), with the ordering
// that lets the test look at the destination afterwards.
class ReportingLayer : public FaultInjectingFileLayer {
public:
    std::int64_t read(int fd, void* destination, std::size_t size, std::uint64_t offset) override {
        const std::int64_t result = FaultInjectingFileLayer::read(fd, destination, size, offset);
        reads_made.fetch_add(1, std::memory_order_release);
        return result;
    }
    std::int64_t kernel_result(const ReadAttempt& attempt, std::int64_t result) override {
        reads_made.fetch_add(1, std::memory_order_release);
        return FaultInjectingFileLayer::kernel_result(attempt, result);
    }
    std::atomic<int> reads_made{0};
};

TEST_P(FileReadQueueTest, AReadPastTheShutdownTimeoutIsLoggedAndFinishesLater) {
    const RandomFile file(mib, 111);
    std::vector<std::byte> destination(4096);
    ReportingLayer faults;
    faults.hold();
    const std::size_t threads = thread_count();
    std::vector<std::string> errors;
    std::mutex errors_mutex;
    const auto start = Clock::now();
    {
        auto queue = make_queue({.layer = &faults,
                                 .shutdown_timeout = 100ms,
                                 .log = Log([&](LogLevel level, std::string_view message) {
                                     std::lock_guard lock(errors_mutex);
                                     if (level == LogLevel::error) errors.emplace_back(message);
                                 })});
        queue->submit({file.fd(), 0, destination, 0});
        ASSERT_TRUE(eventually([&] { return faults.held() == 1; }));
    }
    EXPECT_LT(Clock::now() - start, 5s);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("still in flight"), std::string::npos) << errors[0];
    faults.release();  // the left thread reads, finds the queue stopped and ends
    EXPECT_TRUE(eventually([&] { return thread_count() <= threads + runtime_threads; }));
    ASSERT_TRUE(eventually([&] { return faults.reads_made.load(std::memory_order_acquire) == 1; }));
    EXPECT_TRUE(file.holds(0, destination));
}

INSTANTIATE_TEST_SUITE_P(Backends, FileReadQueueTest,
                         testing::Values(FileReadBackend::threads, FileReadBackend::io_uring),
                         backend_name);

TEST(FileReadQueueBackends, BothBackendsReadTheSameBytes) {
    const std::string reason = FileReadQueue::io_uring_unavailable_reason();
    if (!reason.empty()) GTEST_SKIP() << "no io_uring here: " << reason;
    const RandomFile file(3 * mib, 121);
    std::vector<Planned> by_threads = random_reads(60, file.bytes().size(), 122);
    std::vector<Planned> by_ring = by_threads;
    FileReadQueue threads({.backend = FileReadBackend::threads});
    FileReadQueue ring({.backend = FileReadBackend::io_uring});
    submit_all(threads, file.fd(), by_threads);
    submit_all(ring, file.fd(), by_ring);
    const auto from_threads = wait_all(threads, by_threads.size());
    const auto from_ring = wait_all(ring, by_ring.size());
    for (std::size_t i = 0; i < by_threads.size(); ++i) {
        EXPECT_EQ(by_threads[i].destination, by_ring[i].destination) << "read " << i;
        EXPECT_EQ(from_threads.at(i).status, from_ring.at(i).status);
        EXPECT_EQ(from_threads.at(i).bytes, from_ring.at(i).bytes);
    }
}

// Whether this file's filesystem reads cached bytes without waiting (preadv2 RWF_NOWAIT), as
// the ring's page-cache path needs; empty if it does, else why not.
std::string nowait_unavailable_reason(int fd) {
    std::vector<std::byte> probe(4096);
    iovec destination{probe.data(), probe.size()};
    if (::preadv2(fd, &destination, 1, 0, RWF_NOWAIT) == ssize_t(probe.size())) return {};
    return std::string("preadv2 with RWF_NOWAIT: ") + std::strerror(errno);
}

TEST(FileReadQueueBackends, TheRingCopiesCachedBytesAtOnceAndSendsDirectReadsToTheKernel) {
    const std::string reason = FileReadQueue::io_uring_unavailable_reason();
    if (!reason.empty()) GTEST_SKIP() << "no io_uring here: " << reason;
    const RandomFile file(2 * mib, 131);  // just written: in the page cache
    const std::string nowait = nowait_unavailable_reason(file.fd());
    if (!nowait.empty()) GTEST_SKIP() << "the temporary folder's filesystem: " << nowait;
    std::vector<Planned> reads = random_reads(40, file.bytes().size(), 132);
    FileReadQueue ring({.backend = FileReadBackend::io_uring});
    submit_all(ring, file.fd(), reads);
    for (const auto& [tag, completion] : wait_all(ring, reads.size())) {
        ASSERT_EQ(completion.status, ReadStatus::ok) << completion.message;
        EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination)) << "read " << tag;
    }
    // Every byte was cached; a page the kernel dropped meanwhile would go to the ring.
    EXPECT_GE(ring.statistics().page_cache_attempts, reads.size() / 2);
    FileReadQueue threads({.backend = FileReadBackend::threads});
    submit_all(threads, file.fd(), reads);
    wait_all(threads, reads.size());
    EXPECT_EQ(threads.statistics().page_cache_attempts, 0u) << "the ring's path alone";

    UniqueFd direct(::open(file.path().c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
    if (!direct) GTEST_SKIP() << "the temporary folder's filesystem refuses O_DIRECT";
    std::unique_ptr<std::byte, decltype(&std::free)> aligned(
        static_cast<std::byte*>(std::aligned_alloc(4096, 65536)), &std::free);
    const std::uint64_t before = ring.statistics().page_cache_attempts;
    ring.submit({direct.get(), 8192, {aligned.get(), 65536}, 1});
    const auto done = wait_all(ring, 1);
    ASSERT_EQ(done.at(1).status, ReadStatus::ok) << done.at(1).message;
    EXPECT_TRUE(std::equal(aligned.get(), aligned.get() + 65536, file.bytes().begin() + 8192));
    EXPECT_EQ(ring.statistics().page_cache_attempts, before) << "an O_DIRECT read goes to the ring";
}

// As many page cache copiers as asked for (each a thread beside the ring's), every byte read as
// by the automatic count; more than the most are refused with the number.
TEST(FileReadQueueBackends, ThePageCacheCopiersAreAsManyAsAskedFor) {
    try {
        FileReadQueue queue({.page_cache_copiers = 65});
        ADD_FAILURE() << "a queue with 65 page cache copiers was made";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
        EXPECT_NE(std::string(error.what()).find("page_cache_copiers=65"), std::string::npos)
            << error.what();
    }
    const std::string reason = FileReadQueue::io_uring_unavailable_reason();
    if (!reason.empty()) GTEST_SKIP() << "no io_uring here: " << reason;
    const RandomFile file(2 * mib, 133);  // just written: in the page cache
    const std::string nowait = nowait_unavailable_reason(file.fd());
    if (!nowait.empty()) GTEST_SKIP() << "the temporary folder's filesystem: " << nowait;
    for (const std::size_t copiers : {std::size_t(1), std::size_t(6)}) {
        SCOPED_TRACE(copiers);
        const std::size_t threads = thread_count();
        std::vector<Planned> reads = random_reads(40, file.bytes().size(), 134 + copiers);
        FileReadQueue ring({.backend = FileReadBackend::io_uring, .page_cache_copiers = copiers});
        submit_all(ring, file.fd(), reads);
        for (const auto& [tag, completion] : wait_all(ring, reads.size())) {
            ASSERT_EQ(completion.status, ReadStatus::ok) << completion.message;
            EXPECT_TRUE(file.holds(reads[tag].offset, reads[tag].destination)) << "read " << tag;
        }
        EXPECT_GE(ring.statistics().page_cache_attempts, reads.size() / 2);
        // The ring's thread and the copiers (started before the ring takes its first read).
        EXPECT_GE(thread_count(), threads + 1 + copiers);
        EXPECT_LE(thread_count(), threads + 1 + copiers + runtime_threads);
    }
}

TEST(FileReadQueueBackends, AutomaticTakesIoUringWhereItWorks) {
    FileReadQueue queue({.log = Log(silent_log())});
    const bool available = FileReadQueue::io_uring_unavailable_reason().empty();
    EXPECT_EQ(queue.backend(), available ? FileReadBackend::io_uring : FileReadBackend::threads);
}

}  // namespace
}  // namespace vtpage::vt
