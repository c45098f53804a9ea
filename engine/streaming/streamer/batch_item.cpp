#include "streaming/streamer/batch_item.hpp"

#include <sys/stat.h>

namespace vtpage::vt::streamer_detail {

std::size_t StoredPageIdHash::operator()(const StoredPageId& id) const noexcept {
    std::uint64_t h = id.device * 0x9E3779B97F4A7C15ull;
    h ^= id.inode + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= id.offset + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return std::size_t(h);
}

std::optional<StoredPage> stored_page_of(const TileSource* source, std::uint64_t layout_page) {
    try {
        if (!source) return std::nullopt;
        const std::optional<StoredPageRead> read = source->stored_read(layout_page);
        if (!read) return std::nullopt;
        struct stat status {};
        if (::fstat(read->fd, &status) != 0) return StoredPage{*read, {0, 0, read->offset}};
        return StoredPage{
            *read, {std::uint64_t(status.st_dev), std::uint64_t(status.st_ino), read->offset}};
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace vtpage::vt::streamer_detail
