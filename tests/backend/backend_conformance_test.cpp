// The backend contract (backend.hpp), checked on every backend this machine has: the same calls,
// the same results, the same typed errors.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "../support/backend_fixture.hpp"
#include "../support/child_process.hpp"
#include "../support/expect_error.hpp"
#include "vtpage/base/fd_socket.hpp"

namespace vtpage {
namespace {

std::vector<std::uint32_t> random_words(std::size_t bytes, std::uint32_t seed) {
    std::vector<std::uint32_t> words(bytes / sizeof(std::uint32_t));
    std::mt19937 random(seed);
    for (auto& word : words) word = random();
    return words;
}

std::uint64_t fnv1a(const void* data, std::size_t size) {
    auto* bytes = static_cast<const unsigned char*>(data);
    std::uint64_t hash = 1469598103934665603ull;
    for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
}

class BackendConformance : public test::BackendTest {
protected:
    // Every test gives back everything it took.
    void TearDown() override { expect_baseline_resources(); }

    // A reserved range with `pages` pages, each its own mapping, read-write.
    struct Committed {
        DeviceAddress address = 0;
        std::vector<PhysicalHandle> pages;
    };
    Committed commit(std::size_t pages) {
        Committed result;
        result.address = backend_->reserve(pages * page_);
        for (std::size_t i = 0; i < pages; ++i) {
            result.pages.push_back(backend_->create(page_));
            backend_->map(result.address + i * page_, page_, result.pages.back());
        }
        backend_->set_access(result.address, pages * page_, Access::read_write);
        return result;
    }
    void release_all(const Committed& committed) {
        const std::size_t size = committed.pages.size() * page_;
        backend_->unmap(committed.address, size);
        for (auto page : committed.pages) backend_->release(page);
        backend_->free_reservation(committed.address, size);
    }
};

TEST_P(BackendConformance, ReportsCapabilitiesAndGranularity) {
    const Capabilities& caps = backend_->capabilities();
    EXPECT_EQ(caps.backend, GetParam());
    EXPECT_TRUE(caps.virtual_memory);
    EXPECT_FALSE(caps.device_name.empty());
    Granularity granularity = backend_->granularity();
    EXPECT_GT(granularity.minimum, 0u);
    EXPECT_EQ(granularity.recommended % granularity.minimum, 0u);
    MemoryInfo memory = backend_->memory_info();
    EXPECT_GT(memory.total, 0u);
    EXPECT_LE(memory.free, memory.total);
}

TEST_P(BackendConformance, ReservesHugeRangesAligned) {
    const std::size_t alignment = 64 * page_;
    DeviceAddress small = backend_->reserve(16 * page_, alignment);
    EXPECT_NE(small, 0u);
    EXPECT_EQ(small % alignment, 0u);
    DeviceAddress huge = backend_->reserve(test::huge_reservation_bytes);
    EXPECT_NE(huge, 0u);
    EXPECT_EQ(backend_->live_resources().reservations, baseline_.reservations + 2);
    backend_->free_reservation(huge, test::huge_reservation_bytes);
    backend_->free_reservation(small, 16 * page_);
}

TEST_P(BackendConformance, ReserveWithHintGivesAValidRange) {
    DeviceAddress first = backend_->reserve(4 * page_);
    backend_->free_reservation(first, 4 * page_);
    DeviceAddress again = backend_->reserve(4 * page_, 0, first);
    EXPECT_EQ(again % page_, 0u);
    backend_->free_reservation(again, 4 * page_);
}

TEST_P(BackendConformance, MapWriteReadUnmap) {
    Committed committed = commit(4);
    auto words = random_words(4 * page_, 1);
    backend_->write(committed.address, words.data(), 4 * page_);
    std::vector<std::uint32_t> back(words.size());
    backend_->read(back.data(), committed.address, 4 * page_);
    EXPECT_EQ(back, words);
    backend_->synchronize();  // nothing in flight: returns at once, and the backend stays usable
    // A read across a page boundary, at an odd offset.
    std::vector<std::uint32_t> middle(16);
    backend_->read(middle.data(), committed.address + page_ - 32, 64);
    EXPECT_TRUE(std::equal(middle.begin(), middle.end(), words.begin() + (page_ - 32) / 4));
    EXPECT_EQ(backend_->live_resources().mappings, baseline_.mappings + 4);
    // One unmap over four whole mappings.
    release_all(committed);
}

TEST_P(BackendConformance, SecondMappingOfAPageSeesTheSameBytes) {
    Committed committed = commit(1);
    DeviceAddress second = backend_->reserve(page_);
    backend_->map(second, page_, committed.pages[0]);
    backend_->set_access(second, page_, Access::read_write);
    auto words = random_words(page_, 2);
    backend_->write(committed.address, words.data(), page_);
    std::vector<std::uint32_t> back(words.size());
    backend_->read(back.data(), second, page_);
    EXPECT_EQ(back, words);
    backend_->unmap(second, page_);
    backend_->free_reservation(second, page_);
    release_all(committed);
}

TEST_P(BackendConformance, ReleaseWhileMappedKeepsTheMemoryUntilUnmap) {
    Committed committed = commit(1);
    auto words = random_words(page_, 3);
    backend_->write(committed.address, words.data(), page_);
    backend_->release(committed.pages[0]);
    std::vector<std::uint32_t> back(words.size());
    backend_->read(back.data(), committed.address, page_);
    EXPECT_EQ(back, words);
    backend_->unmap(committed.address, page_);
    backend_->free_reservation(committed.address, page_);
}

TEST_P(BackendConformance, AccessFlagsAreEnforcedOnCopies) {
    DeviceAddress address = backend_->reserve(page_);
    PhysicalHandle page = backend_->create(page_);
    backend_->map(address, page_, page);
    std::uint32_t word = 7;
    // A fresh mapping is not accessible until set_access.
    EXPECT_ERRC_WITH_OPERATION(backend_->read(&word, address, 4), Errc::access_denied);
    backend_->set_access(address, page_, Access::read_write);
    backend_->write(address, &word, 4);
    if (backend_->capabilities().read_only_access) {
        backend_->set_access(address, page_, Access::read);
        EXPECT_ERRC_WITH_OPERATION(backend_->write(address, &word, 4), Errc::access_denied);
        std::uint32_t back = 0;
        backend_->read(&back, address, 4);
        EXPECT_EQ(back, 7u);
    }
    backend_->set_access(address, page_, Access::none);
    EXPECT_ERRC_WITH_OPERATION(backend_->read(&word, address, 4), Errc::access_denied);
    backend_->unmap(address, page_);
    backend_->release(page);
    backend_->free_reservation(address, page_);
}

int import_child(const std::vector<std::string>& arguments) {
    // arguments: backend name, page size; the socket is descriptor 3.
    FdSocket socket{UniqueFd(3)};
    std::string reason;
    auto backend = test::try_make_backend(arguments.at(0), reason);
    if (!backend) return 2;
    const std::size_t size = std::stoull(arguments.at(1));
    FdSocket::Message message = socket.receive();
    if (message.fds.size() != 1 || message.bytes.size() != sizeof(std::uint64_t)) return 3;
    std::uint64_t expected_hash = 0;
    std::memcpy(&expected_hash, message.bytes.data(), sizeof(expected_hash));
    PhysicalHandle page = backend->import_fd(message.fds[0].get(), size);
    DeviceAddress address = backend->reserve(size);
    backend->map(address, size, page);
    backend->set_access(address, size, Access::read);
    std::vector<unsigned char> bytes(size);
    backend->read(bytes.data(), address, size);
    const std::uint64_t hash = fnv1a(bytes.data(), size);
    std::string reply = hash == expected_hash ? "same" : "different";
    socket.send(std::as_bytes(std::span(reply)));
    backend->unmap(address, size);
    backend->release(page);
    backend->free_reservation(address, size);
    return hash == expected_hash ? 0 : 4;
}
VTPAGE_CHILD_MODE("import", import_child);

TEST_P(BackendConformance, ExportedFdImportedInAnotherProcessSeesTheSameBytes) {
    if (!backend_->capabilities().fd_handles) {
        GTEST_SKIP() << "the backend cannot export fds";
    }
    Committed committed = commit(1);
    auto words = random_words(page_, 4);
    backend_->write(committed.address, words.data(), page_);
    const std::uint64_t hash = fnv1a(words.data(), page_);

    auto [parent_end, child_end] = FdSocket::pair();
    test::ChildResult child;
    {
        UniqueFd exported = backend_->export_fd(committed.pages[0]);
        ASSERT_TRUE(exported);
        const int fd = exported.get();
        parent_end.send(std::as_bytes(std::span(&hash, 1)), std::span(&fd, 1));
    }
    std::string reply;
    std::thread waiter([&] {
        child = test::run_child("import", {GetParam(), std::to_string(page_)}, child_end.fd());
    });
    try {
        auto message = parent_end.receive();
        reply.assign(reinterpret_cast<const char*>(message.bytes.data()), message.bytes.size());
    } catch (const Error& error) {
        reply = error.what();
    }
    waiter.join();
    EXPECT_EQ(reply, "same") << child.output;
    EXPECT_EQ(child.exit_code, 0) << child.output;
    release_all(committed);
}

TEST_P(BackendConformance, UnalignedSizesAreRefused) {
    EXPECT_ERRC_WITH_OPERATION(backend_->reserve(page_ + 1), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->reserve(0), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->reserve(page_, page_ / 2), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->create(page_ / 2), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->create(0), Errc::invalid_argument);
    DeviceAddress address = backend_->reserve(2 * page_);
    PhysicalHandle page = backend_->create(page_);
    EXPECT_ERRC_WITH_OPERATION(backend_->map(address + 4096, page_, page), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->map(address, page_ + 4096, page), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->map(address, 2 * page_, page), Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->map(address + 2 * page_, page_, page), Errc::out_of_range);
    backend_->release(page);
    backend_->free_reservation(address, 2 * page_);
}

TEST_P(BackendConformance, PartialUnmapAndHolesAreRefused) {
    DeviceAddress address = backend_->reserve(4 * page_);
    PhysicalHandle big = backend_->create(2 * page_);
    PhysicalHandle small = backend_->create(page_);
    backend_->map(address, 2 * page_, big);
    backend_->map(address + 3 * page_, page_, small);
    EXPECT_ERRC_WITH_OPERATION(backend_->unmap(address, page_), Errc::partial_unmap);
    EXPECT_ERRC_WITH_OPERATION(backend_->unmap(address + page_, page_), Errc::partial_unmap);
    // A hole at page 2:
    EXPECT_ERRC_WITH_OPERATION(backend_->unmap(address, 4 * page_), Errc::not_mapped);
    EXPECT_ERRC_WITH_OPERATION(backend_->unmap(address + 2 * page_, page_), Errc::not_mapped);
    EXPECT_ERRC_WITH_OPERATION(backend_->set_access(address, 4 * page_, Access::read_write),
                               Errc::not_mapped);
    EXPECT_ERRC_WITH_OPERATION(backend_->set_access(address, page_, Access::read_write),
                               Errc::invalid_argument);
    // The refusals changed nothing: both mappings are whole and unmap cleanly.
    EXPECT_EQ(backend_->live_resources().mappings, baseline_.mappings + 2);
    backend_->unmap(address, 2 * page_);
    backend_->unmap(address + 3 * page_, page_);
    backend_->release(big);
    backend_->release(small);
    backend_->free_reservation(address, 4 * page_);
}

TEST_P(BackendConformance, MappingOverAMappedPageIsRefused) {
    Committed committed = commit(1);
    PhysicalHandle other = backend_->create(page_);
    EXPECT_ERRC_WITH_OPERATION(backend_->map(committed.address, page_, other),
                               Errc::already_mapped);
    backend_->release(other);
    release_all(committed);
}

TEST_P(BackendConformance, DoubleReleaseAndStaleHandlesAreRefused) {
    PhysicalHandle page = backend_->create(page_);
    backend_->release(page);
    EXPECT_ERRC_WITH_OPERATION(backend_->release(page), Errc::invalid_handle);
    DeviceAddress address = backend_->reserve(page_);
    EXPECT_ERRC_WITH_OPERATION(backend_->map(address, page_, page), Errc::invalid_handle);
    EXPECT_ERRC_WITH_OPERATION(backend_->export_fd(page), Errc::invalid_handle);
    EXPECT_ERRC_WITH_OPERATION(backend_->release(PhysicalHandle{}), Errc::invalid_handle);
    backend_->free_reservation(address, page_);
}

TEST_P(BackendConformance, ImportingAClosedFdIsRefused) {
    if (!backend_->capabilities().fd_handles) {
        GTEST_SKIP() << "the backend cannot export fds";
    }
    PhysicalHandle page = backend_->create(page_);
    int closed = backend_->export_fd(page).get();  // the UniqueFd closes it at once
    EXPECT_ERRC_WITH_OPERATION(backend_->import_fd(closed, page_), Errc::invalid_handle);
    EXPECT_ERRC_WITH_OPERATION(backend_->import_fd(-1, page_), Errc::invalid_handle);
    backend_->release(page);
}

TEST_P(BackendConformance, FreeingReservationsIsChecked) {
    Committed committed = commit(1);
    EXPECT_ERRC_WITH_OPERATION(backend_->free_reservation(committed.address, page_), Errc::busy);
    EXPECT_ERRC_WITH_OPERATION(backend_->free_reservation(committed.address, 2 * page_),
                               Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->free_reservation(committed.address + page_, page_),
                               Errc::invalid_argument);
    release_all(committed);
}

TEST_P(BackendConformance, BadDevicesAreRefused) {
    Committed committed = commit(1);
    DeviceAccess bad{99, Access::read_write};
    EXPECT_ERRC_WITH_OPERATION(backend_->set_access(committed.address, page_, std::span(&bad, 1)),
                               Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(
        backend_->set_access(committed.address, page_, std::span<DeviceAccess>()),
        Errc::invalid_argument);
    EXPECT_ERRC_WITH_OPERATION(backend_->create(page_, PageOptions{99}), Errc::invalid_argument);
    release_all(committed);
}

TEST_P(BackendConformance, OutOfMemoryIsTypedAndNamedByTheBackend) {
    const std::size_t total = backend_->memory_info().total;
    const std::size_t too_much = (total / page_ + 1) * page_;
    try {
        backend_->create(too_much);
        ADD_FAILURE() << "creating " << too_much << " bytes did not fail";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::out_of_memory) << error.what();
        EXPECT_EQ(error.operation(), "create");
    }
    // A reservation larger than any process's address space.
    try {
        backend_->reserve(std::size_t(1) << 60);
        ADD_FAILURE() << "reserving 1 EiB did not fail";
    } catch (const Error& error) {
        EXPECT_TRUE(error.code() == Errc::out_of_memory || error.code() == Errc::invalid_argument)
            << error.what();
        EXPECT_FALSE(error.backend_code_name().empty()) << error.what();
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendConformance, testing::ValuesIn(test::all_backend_names()),
                         test::backend_param_name);

}  // namespace
}  // namespace vtpage
