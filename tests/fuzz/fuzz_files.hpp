// What the fuzz targets share to hand bytes to code that reads files: a template file made once
// by the code under test and read back, the input as a memory file opened by its path, and a
// folder of the process's own.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace vtpage::fuzz {

// The bytes `write` puts in a file at the path it is given (made in the temporary folder, read
// back and removed).
inline std::vector<std::uint8_t> bytes_written_by(
    const std::function<void(const std::string& path)>& write) {
    char path[] = "/tmp/vtpage-fuzz-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) std::abort();
    ::close(fd);
    write(path);
    std::FILE* file = std::fopen(path, "rb");
    if (!file) std::abort();
    std::vector<std::uint8_t> bytes;
    for (int c; (c = std::fgetc(file)) != EOF;) bytes.push_back(std::uint8_t(c));
    std::fclose(file);
    std::remove(path);
    return bytes;
}

// The input as a file in memory, opened by its /proc path as any file is.
class MemoryFile {
public:
    explicit MemoryFile(const std::vector<std::uint8_t>& bytes)
        : fd_(::memfd_create("vtpage-fuzz", MFD_CLOEXEC)) {
        if (fd_ < 0 || ::write(fd_, bytes.data(), bytes.size()) != ssize_t(bytes.size())) {
            std::abort();
        }
    }
    ~MemoryFile() { ::close(fd_); }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;

    int fd() const { return fd_; }
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
    int fd_;
};

// A fresh folder named `name`.<pid> beside the target's binary (in the build folder: nothing is
// left in the system's temporary folder, since libFuzzer ends without running exit handlers).
inline std::filesystem::path own_folder(const std::string& name) {
    namespace fs = std::filesystem;
    const fs::path made = fs::read_symlink("/proc/self/exe").parent_path() /
                          (name + "." + std::to_string(::getpid()));
    fs::remove_all(made);
    fs::create_directories(made);
    return made;
}

}  // namespace vtpage::fuzz
