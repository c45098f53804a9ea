#include "page_assembler.hpp"

#include <algorithm>
#include <cstring>

#include "vtpage/base/error.hpp"

namespace vtpage::bake {

PageAssembler::PageAssembler(const vt::TextureLayout& layout, vt::PageArchiveWriter& writer)
    : layout_(layout), writer_(writer) {}

std::uint32_t PageAssembler::tiles_in_page(const vt::TextureLayout& layout, std::uint64_t page) {
    const vt::PagePosition position = vt::page_position(layout, page);
    if (layout.in_tail(position.mip)) return layout.mip_count - layout.tail_first_mip;
    const vt::TileFormatInfo info = layout.tile_format();
    const vt::MipLevel& level = layout.mips[position.mip];
    const std::uint32_t x0 = position.x * info.page_tiles_x, y0 = position.y * info.page_tiles_y;
    return std::min(info.page_tiles_x, level.tiles_x - x0) *
           std::min(info.page_tiles_y, level.tiles_y - y0);
}

void PageAssembler::add_tile(std::uint32_t mip, std::uint32_t x, std::uint32_t y,
                             std::span<const std::byte> bytes) {
    const vt::TileFormatInfo info = layout_.tile_format();
    if (!layout_.has_tile(mip, x, y) || bytes.size() != info.tile_bytes()) {
        throw Error(Errc::invalid_argument, "PageAssembler::add_tile",
                    detail::concat("no tile ", x, ",", y, " of mip ", mip, " of ",
                                   info.tile_bytes(), " bytes in this layout"),
                    detail::concat("bytes=", bytes.size()));
    }
    const vt::TileLocation where = layout_.locate(mip, x, y);
    std::unique_lock lock(mutex_);
    Pending& page = pending_[where.page];
    if (page.bytes.empty()) {
        page.bytes.assign(vt::format_page_bytes, std::byte{0});
        page.filled.assign(info.tiles_per_page(), false);
        page.remaining = tiles_in_page(layout_, where.page);
        peak_pages_held_ = std::max<std::uint64_t>(peak_pages_held_, pending_.size());
    }
    if (page.filled[where.tile_in_page]) {
        throw Error(Errc::invalid_argument, "PageAssembler::add_tile",
                    detail::concat("tile ", x, ",", y, " of mip ", mip, " was added before"));
    }
    page.filled[where.tile_in_page] = true;
    std::memcpy(page.bytes.data() + where.byte_offset(), bytes.data(), bytes.size());
    if (--page.remaining > 0) return;
    const std::vector<std::byte> done = std::move(page.bytes);
    pending_.erase(where.page);
    ++pages_written_;
    lock.unlock();
    writer_.add_page(where.page, done);  // compresses: outside the lock, on this worker
}

std::uint64_t PageAssembler::pages_written() const {
    std::lock_guard lock(mutex_);
    return pages_written_;
}

std::uint64_t PageAssembler::peak_pages_held() const {
    std::lock_guard lock(mutex_);
    return peak_pages_held_;
}

}  // namespace vtpage::bake
