#include "set_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "vtpage/base/error.hpp"

namespace vtpage::bench::disk {

namespace {

int open_file(const std::string& path, int flags) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0) {
        throw Error(Errc::io_error, "open", path + ": " + std::strerror(errno));
    }
    return fd;
}

}  // namespace

std::string_view to_string(ReadMode mode) noexcept {
    switch (mode) {
        case ReadMode::warm:
            return "warm (page cache)";
        case ReadMode::cold_direct:
            return "cold (O_DIRECT)";
        case ReadMode::cold_dropped:
            return "cold (POSIX_FADV_DONTNEED)";
    }
    return "?";
}

bool is_cold(ReadMode mode) noexcept { return mode != ReadMode::warm; }

ReadMode cold_read_mode(const PageSet& set) {
    const int fd = ::open(set.archives.front()->path().c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd < 0) return ReadMode::cold_dropped;  // EINVAL: the file system refuses O_DIRECT
    void* buffer = std::aligned_alloc(4096, 4096);
    const bool works = buffer && ::pread(fd, buffer, 4096, 0) == 4096;
    std::free(buffer);
    ::close(fd);
    return works ? ReadMode::cold_direct : ReadMode::cold_dropped;
}

void drop_cached_pages(const PageSet& set) {
    for (const auto& archive : set.archives) {
        const int fd = open_file(archive->path(), 0);
        ::fdatasync(fd);  // dirty pages are not dropped: write them first
        const int error = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
        if (error != 0) {
            throw Error(Errc::io_error, "posix_fadvise", archive->path() + ": " + strerror(error));
        }
    }
}

SetFiles::SetFiles(const PageSet& set, ReadMode mode) {
    if (mode == ReadMode::cold_dropped) drop_cached_pages(set);
    try {
        for (const auto& archive : set.archives) {
            fds_.push_back(
                open_file(archive->path(), mode == ReadMode::cold_direct ? O_DIRECT : 0));
        }
    } catch (...) {
        for (int fd : fds_) ::close(fd);
        throw;
    }
}

SetFiles::~SetFiles() {
    for (int fd : fds_) ::close(fd);
}

}  // namespace vtpage::bench::disk
