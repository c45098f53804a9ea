#include "streaming/streamer/tail_placement.hpp"

#include <algorithm>

namespace vtpage::vt::streamer_detail {

namespace {
constexpr std::uint64_t smallest_tile_bytes = tile_format_info(TileFormat::bc1).tile_bytes();
static_assert(smallest_tile_bytes <= tile_format_info(TileFormat::rgba8).tile_bytes() &&
              smallest_tile_bytes <= tile_format_info(TileFormat::bc3).tile_bytes());
}  // namespace

std::uint64_t tail_bytes(const TextureLayout& layout) {
    return std::uint64_t(layout.mip_count - layout.tail_first_mip) *
           layout.tile_format().tile_bytes();
}

bool tail_page_has_room(std::uint64_t used, std::uint64_t bytes) {
    return used <= page_bytes && page_bytes - used >= bytes;
}

bool tail_page_full(std::uint64_t used) { return !tail_page_has_room(used, smallest_tile_bytes); }

void fill_page_on_host(Backend& backend, bool gpu, const TileSource& source,
                       std::uint64_t source_page, DeviceAddress data) {
    if (!gpu) {
        source.fill_host(source_page,
                         std::span(reinterpret_cast<std::byte*>(data), std::size_t(page_bytes)));
        return;
    }
    std::vector<std::byte> staging(page_bytes);
    source.fill_host(source_page, staging);
    backend.write(data, staging.data(), staging.size());
}

TailPlacement::TailPlacement(Backend& backend, bool pack, bool gpu, int device)
    : backend_(backend), pack_(pack), gpu_(gpu), device_(device) {}

TailPlacement::~TailPlacement() = default;

TailPlacement::AddLock TailPlacement::lock() { return AddLock(mutex_); }

std::optional<StreamedPage> TailPlacement::pack(const AddLock&, TextureId texture,
                                                const TextureLayout& layout, PageIndex tail,
                                                const TileSource& source) {
    if (!pack_) return std::nullopt;
    const std::uint64_t bytes = tail_bytes(layout);
    auto host = std::find_if(hosts_.begin(), hosts_.end(),
                             [&](const TailHost& h) { return tail_page_has_room(h.used, bytes); });
    if (host == hosts_.end()) return std::nullopt;
    // Sources fill whole pages: the tail's tiles are the first `bytes` of its page (numbered in
    // the source's layout, which has no tile levels).
    std::vector<std::byte> staging(page_bytes);
    source.fill_host(source.layout().tail_page(), staging);
    backend_.write(host->page.data + host->used, staging.data(), bytes);
    StreamedPage page = host->page;
    page.page = tail;
    page.texture = texture;
    page.layout_page = layout.tail_page();
    page.mip = layout.tail_first_mip;
    page.data += host->used;
    page.offset = host->used;
    page.bytes = bytes;
    page.fence = 0;
    host->used += bytes;
    // No tail is smaller than one tile: a page without room for one is full.
    if (tail_page_full(host->used)) hosts_.erase(host);
    return page;
}

void TailPlacement::fill_own(const AddLock&, const TextureLayout& layout, const StreamedPage& page,
                             const TileSource& source) {
    if (gpu_ && source.fills_device()) {
        if (!fill_context_) fill_context_ = std::make_unique<DeviceFillContext>(device_);
        fill_context_->begin_batch();
        const DevicePageFill fill{source.layout().tail_page(), page.data};
        source.fill_device(std::span(&fill, 1), *fill_context_);
        fill_context_->wait(fill_context_->end_batch());
    } else {
        fill_page_on_host(backend_, gpu_, source, source.layout().tail_page(), page.data);
    }
    if (pack_ && !tail_page_full(tail_bytes(layout))) hosts_.push_back({page, tail_bytes(layout)});
}

}  // namespace vtpage::vt::streamer_detail
