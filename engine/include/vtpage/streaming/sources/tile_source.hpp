// Where a texture's pages come from. A tile source fills a whole page of its texture -- all 32
// tiles, borders included, unused tiles zero -- into host memory, and, where it can, into device
// memory on a CUDA stream. The streamer calls it from its worker threads, several pages at once:
// implementations are thread-safe.
//
// Pages are numbered as in TextureLayout (relative to the texture) of the shape without tile
// levels, layout() below: a shape with tile levels (texture_layout.hpp) is streamed a tile a
// page in its finest levels, and the streamer copies each tile out of the page its source
// fills (source_location).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtpage/backend/backend.hpp"
#include "vtpage/streaming/archive/stored_part.hpp"
#include "vtpage/streaming/layout/texture_layout.hpp"
#include "vtpage/streaming/layout/texture_sampling.hpp"

namespace vtpage::vt {

// A cudaStream_t, kept opaque so that this header needs no CUDA headers.
using CudaStream = void*;
// Called with the stream of a batch whose fills (or copies) were just enqueued on it; returns
// the fence value carried by the batch's ready events (StreamerSettings::on_fills_enqueued).
using FillsEnqueuedCallback = std::function<std::uint64_t(CudaStream stream)>;

class DeviceFillContext;

// Where a page's stored bytes are in an open file: what the streamer's read queue fetches for
// decode_stored. The fd stays open as long as the source.
struct StoredPageRead {
    int fd = -1;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

// One page to fill in device memory: page_bytes bytes at destination.
struct DevicePageFill {
    std::uint64_t page = 0;         // page of the texture (its TextureLayout page)
    DeviceAddress destination = 0;  // a device address the context's device can write
};

class TileSource {
public:
    virtual ~TileSource() = default;
    TileSource(const TileSource&) = delete;
    TileSource& operator=(const TileSource&) = delete;

    // The texture's size and tile format (shape().valid() holds for every source).
    virtual TextureShape shape() const noexcept = 0;
    // How the texture is meant to be sampled (address modes, colour space): the shaders wrap
    // and decode by it. Clamp to edge and linear unless the source knows better (a baked file
    // records it); a source whose tile borders do not follow its modes would show seams.
    virtual TextureSampling sampling() const noexcept { return {}; }
    // For logs and error messages: "procedural seed 7" or the file's path.
    virtual std::string name() const = 0;

    // Writes page `page` (all page_bytes bytes) into destination, which holds at least
    // page_bytes. out_of_range for a page past the texture; io_error / corrupt_data from files.
    virtual void fill_host(std::uint64_t page, std::span<std::byte> destination) const = 0;

    // Whether fill_device works (a CUDA build, and a source that implements it).
    virtual bool fills_device() const noexcept { return false; }
    // Enqueues the fills on context.stream(): the bytes are final once the stream has passed
    // the work enqueued here. The default throws not_supported.
    virtual void fill_device(std::span<const DevicePageFill> fills,
                             DeviceFillContext& context) const;

    // Sources that read pages from files can split a fill in two, so that the streamer reads
    // many pages at once and decodes them on its own threads: where page `page`'s stored bytes
    // are (nullopt, the default: use fill_host / fill_device), and their decoding into
    // destination (page_bytes), with the checks the source makes. out_of_range for a page past
    // the texture, corrupt_data for damaged bytes; the default decode_stored throws
    // not_supported.
    virtual std::optional<StoredPageRead> stored_read(std::uint64_t page) const;
    virtual void decode_stored(std::uint64_t page, std::span<const std::byte> stored,
                               std::span<std::byte> destination) const;
    // decode_stored in parts that several threads decode at once (a page stored as several
    // frames): split_stored checks the stored bytes once and says where each part is;
    // decode_stored_part decodes one part into its place in destination (page_bytes), on any
    // thread. The defaults: one part, decoded by decode_stored.
    virtual std::vector<StoredPart> split_stored(std::uint64_t page,
                                                 std::span<const std::byte> stored) const;
    virtual void decode_stored_part(std::uint64_t page, const StoredPart& part,
                                    std::span<std::byte> destination) const;

    // The layout the source's pages are numbered in: its shape's, without tile levels.
    TextureLayout layout() const noexcept { return TextureLayout(shape().untiled()); }

protected:
    TileSource() = default;
};

}  // namespace vtpage::vt
