#include "streaming/archive/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage::vt::file_io {

namespace {

[[noreturn]] void fail(const char* operation, const std::string& what, const std::string& path,
                       int error) {
    throw Error(Errc::io_error, operation, detail::concat(what, ": ", errno_message(error)),
                detail::concat("path=", path), error, errno_name(error));
}

}  // namespace

UniqueFd create_temporary(const std::string& temporary, const char* operation) {
    constexpr int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    UniqueFd fd(::open(temporary.c_str(), flags, 0644));
    if (!fd && errno == EEXIST) {
        struct stat info {};
        if (::lstat(temporary.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
            ::unlink(temporary.c_str()) == 0) {
            fd = UniqueFd(::open(temporary.c_str(), flags, 0644));
        } else {
            errno = EEXIST;
        }
    }
    if (!fd) {
        const int error = errno;
        if (error == EEXIST || error == ELOOP) {
            throw Error(
                Errc::io_error, operation,
                detail::concat("cannot create the temporary file ", temporary,
                               ": something other than a regular file (a symbolic link?) is in the "
                               "way; refusing to write through it"),
                detail::concat("path=", temporary), error, errno_name(error));
        }
        fail(operation, "cannot create the temporary file " + temporary, temporary, error);
    }
    return fd;
}

void commit_temporary(UniqueFd& fd, const std::string& temporary, const std::string& path,
                      const char* operation) {
    if (::fsync(fd.get()) != 0) fail(operation, "cannot finish the file", temporary, errno);
    fd.reset();
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        fail(operation, "cannot rename the finished file", path, errno);
    }
}

UniqueFd open_regular_file(const std::string& path, const char* operation,
                           std::uint64_t& file_bytes) {
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer; its type is refused below.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) fail(operation, "cannot open", path, errno);
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) fail(operation, "cannot stat", path, errno);
    if (!S_ISREG(info.st_mode)) {
        throw Error(Errc::io_error, operation,
                    "not a regular file (a FIFO, device or folder cannot be a baked texture)",
                    detail::concat("path=", path), EINVAL, errno_name(EINVAL));
    }
    file_bytes = std::uint64_t(info.st_size);
    return fd;
}

bool read_exact(int fd, void* destination, std::size_t size, std::uint64_t offset,
                const char* operation, const std::string& path) {
    auto* bytes = static_cast<std::byte*>(destination);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, bytes + done, size - done, off_t(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(operation, "read failed", path, errno);
        }
        if (n == 0) return false;
        done += std::size_t(n);
    }
    return true;
}

void write_exact(int fd, const void* source, std::size_t size, std::uint64_t offset,
                 const char* operation, const std::string& path) {
    const auto* bytes = static_cast<const std::byte*>(source);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd, bytes + done, size - done, off_t(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(operation, "write failed", path, errno);
        }
        done += std::size_t(n);
    }
}

}  // namespace vtpage::vt::file_io
