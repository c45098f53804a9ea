// File helpers shared by the baked texture formats (baked_texture.cpp, page_archive.cpp): exact
// positioned reads and writes, the exclusive temporary file a writer fills before renaming it
// over the destination, and opening a file that must be a regular one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "vtpage/base/unique_fd.hpp"

namespace vtpage::vt::file_io {

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

// Opens `temporary` for writing: created here and now (O_EXCL), never through a symbolic link
// (O_NOFOLLOW), so that a link planted at that name cannot send the bytes to another file. A
// regular file left there by an interrupted writer is removed first; anything else is refused
// (io_error).
UniqueFd create_temporary(const std::string& temporary, const char* operation);

// fsyncs and closes fd (holding `temporary`), then renames temporary over path: io_error on
// failure (the caller removes the temporary file).
void commit_temporary(UniqueFd& fd, const std::string& temporary, const std::string& path,
                      const char* operation);

// Opens path for reading: io_error when it cannot be opened or is not a regular file (checked
// before anything could block on a FIFO). file_bytes receives its size.
UniqueFd open_regular_file(const std::string& path, const char* operation,
                           std::uint64_t& file_bytes);

// Reads exactly size bytes at offset; false when the file ends first, io_error on failure.
bool read_exact(int fd, void* destination, std::size_t size, std::uint64_t offset,
                const char* operation, const std::string& path);

// Writes exactly size bytes at offset; io_error on failure (a full disk included).
void write_exact(int fd, const void* source, std::size_t size, std::uint64_t offset,
                 const char* operation, const std::string& path);

}  // namespace vtpage::vt::file_io
