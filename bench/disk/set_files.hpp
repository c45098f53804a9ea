// The page set's files opened for reading as a measurement wants them: through the page cache
// (warm), or past it (cold): with O_DIRECT where the file system takes it, else read normally
// after posix_fadvise(POSIX_FADV_DONTNEED) dropped the files' cached pages.
#pragma once

#include <string_view>
#include <vector>

#include "page_set.hpp"

namespace vtpage::bench::disk {

enum class ReadMode { warm, cold_direct, cold_dropped };
std::string_view to_string(ReadMode mode) noexcept;
bool is_cold(ReadMode mode) noexcept;

// cold_direct where an O_DIRECT open and aligned read of the set's first file work, else
// cold_dropped.
ReadMode cold_read_mode(const PageSet& set);

// Drops the cached pages of every file of the set (POSIX_FADV_DONTNEED after fdatasync).
void drop_cached_pages(const PageSet& set);

// One fd per archive of the set, opened for `mode` (cold_dropped drops the cache first).
class SetFiles {
public:
    SetFiles(const PageSet& set, ReadMode mode);
    ~SetFiles();
    SetFiles(const SetFiles&) = delete;
    SetFiles& operator=(const SetFiles&) = delete;

    int fd(std::size_t archive) const { return fds_[archive]; }

private:
    std::vector<int> fds_;
};

}  // namespace vtpage::bench::disk
