// The io_uring backend's page cache copiers: a cached range is copied, a range the file does not
// hold (or a bad descriptor) comes back as a miss, every result wakes the owner, and destruction
// copies what was posted before it joins.
#include "streaming/io/page_cache_copiers.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "vtpage/base/unique_fd.hpp"

namespace vtpage::vt {
namespace {

// A file of random bytes, just written (so in the page cache), removed at the end.
class CachedFile {
public:
    explicit CachedFile(std::size_t size) : bytes_(size) {
        std::mt19937 random(size);
        for (std::byte& b : bytes_) b = std::byte(random());
        path_ = std::filesystem::temp_directory_path() /
                ("vtpage-copiers-" + std::to_string(::getpid()) + ".bin");
        fd_ = UniqueFd(::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (fd_) {
            written_ = ::write(fd_.get(), bytes_.data(), bytes_.size()) == ssize_t(bytes_.size());
        }
    }
    ~CachedFile() { std::filesystem::remove(path_); }
    int fd() const { return fd_.get(); }
    const std::vector<std::byte>& bytes() const { return bytes_; }
    // Empty where RWF_NOWAIT reads of cached bytes work here; else why not.
    std::string unusable_reason() const {
        if (!fd_ || !written_) return "cannot write a temporary file";
        std::vector<std::byte> probe(4096);
        iovec destination{probe.data(), probe.size()};
        if (::preadv2(fd(), &destination, 1, 0, RWF_NOWAIT) == ssize_t(probe.size())) return {};
        return std::string("preadv2 with RWF_NOWAIT: ") + std::strerror(errno);
    }

private:
    std::vector<std::byte> bytes_;
    std::filesystem::path path_;
    UniqueFd fd_;
    bool written_ = false;
};

TEST(PageCacheCopiersTest, CopiesWhatIsCachedAndSendsBackTheRest) {
    const CachedFile file(1 << 20);
    if (const std::string reason = file.unusable_reason(); !reason.empty()) GTEST_SKIP() << reason;
    std::atomic<int> wakes{0};
    std::vector<std::byte> whole(65536), past_end(200), bad(16);
    std::optional<PageCacheCopiers> held;
    PageCacheCopiers& copiers = held.emplace(3, [&] { ++wakes; });
    copiers.post({7, file.fd(), 4096, whole.data(), whole.size()});
    copiers.post({9, file.fd(), file.bytes().size() - 100, past_end.data(), past_end.size()});
    copiers.post({11, -1, 0, bad.data(), bad.size()});
    std::vector<PageCacheCopiers::Result> results;
    while (results.size() < 3) {
        const std::vector<PageCacheCopiers::Result> more = copiers.wait_results();
        ASSERT_FALSE(more.empty()) << "jobs were out, yet no result came";
        results.insert(results.end(), more.begin(), more.end());
    }
    for (const PageCacheCopiers::Result& result : results) {
        EXPECT_EQ(result.copied, result.slot == 7) << "slot " << result.slot;
    }
    EXPECT_TRUE(std::equal(whole.begin(), whole.end(), file.bytes().begin() + 4096));
    EXPECT_TRUE(copiers.wait_results().empty()) << "nothing is out: it does not wait";
    EXPECT_TRUE(copiers.take_results().empty());
    held.reset();  // a result is there before its wake is called: count once the threads joined
    EXPECT_EQ(wakes.load(), 3) << "one wake a result";
}

TEST(PageCacheCopiersTest, DestructionCopiesWhatWasPostedBeforeItJoins) {
    const CachedFile file(1 << 20);
    if (const std::string reason = file.unusable_reason(); !reason.empty()) GTEST_SKIP() << reason;
    constexpr std::size_t jobs = 32;
    constexpr std::size_t length = 32768;
    std::vector<std::vector<std::byte>> destinations(jobs, std::vector<std::byte>(length));
    {
        PageCacheCopiers copiers(2, {});
        for (std::size_t i = 0; i < jobs; ++i) {
            copiers.post({i, file.fd(), i * length, destinations[i].data(), length});
        }
    }
    for (std::size_t i = 0; i < jobs; ++i) {
        EXPECT_TRUE(std::equal(destinations[i].begin(), destinations[i].end(),
                               file.bytes().begin() + std::ptrdiff_t(i * length)))
            << "job " << i;
    }
}

}  // namespace
}  // namespace vtpage::vt
