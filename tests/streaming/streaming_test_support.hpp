// Helpers shared by the streaming tests: a fast tile source with a checkable pattern, page reads
// through the backend, a temporary folder (tests/support).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/eventually.hpp"
#include "../support/reference_levels.hpp"
#include "../support/temporary_folder.hpp"
#include "vtpage/backend/backend.hpp"
#include "vtpage/base/log.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"
#include "vtpage/streaming/sources/tile_source.hpp"
#include "vtpage/streaming/streamer/streamer.hpp"

namespace vtpage::test {

// Fills page p with 64-bit words derived from (seed, p, word): cheap, and every page differs.
// Can sleep per page, fail chosen pages, and count fills.
class PatternSource final : public vt::TileSource {
public:
    PatternSource(std::uint32_t size_log2, std::uint64_t seed)
        : size_log2_(size_log2), seed_(seed) {}

    vt::TextureShape shape() const noexcept override {
        return vt::TextureShape::square(size_log2_);
    }
    std::string name() const override { return "pattern " + std::to_string(seed_); }
    void fill_host(std::uint64_t page, std::span<std::byte> destination) const override {
        ++fills;
        if (delay.count() > 0) std::this_thread::sleep_for(delay);
        while (page == held_page && hold.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (failing_pages.count(page)) {
            throw Error(Errc::corrupt_data, "PatternSource", "this page is made to fail",
                        "page=" + std::to_string(page));
        }
        auto* words = reinterpret_cast<std::uint64_t*>(destination.data());
        const std::uint64_t base = (seed_ * 0x9e3779b97f4a7c15ull) ^ (page << 32);
        for (std::size_t i = 0; i < vt::page_bytes / 8; ++i) words[i] = base + i;
    }
    std::vector<std::byte> expected(std::uint64_t page) const {
        std::vector<std::byte> bytes(vt::page_bytes);
        auto* words = reinterpret_cast<std::uint64_t*>(bytes.data());
        const std::uint64_t base = (seed_ * 0x9e3779b97f4a7c15ull) ^ (page << 32);
        for (std::size_t i = 0; i < vt::page_bytes / 8; ++i) words[i] = base + i;
        return bytes;
    }

    std::set<std::uint64_t> failing_pages;
    std::chrono::milliseconds delay{0};
    // While hold is set, the fill of held_page waits.
    std::uint64_t held_page = UINT64_MAX;
    std::atomic<bool> hold{false};
    mutable std::atomic<std::uint64_t> fills{0};

private:
    std::uint32_t size_log2_;
    std::uint64_t seed_;
};

inline std::vector<std::byte> read_device_page(Backend& backend, DeviceAddress address) {
    std::vector<std::byte> bytes(vt::page_bytes);
    backend.read(bytes.data(), address, bytes.size());
    return bytes;
}

inline std::vector<std::byte> source_page(const vt::TileSource& source, std::uint64_t page) {
    std::vector<std::byte> bytes(vt::page_bytes);
    source.fill_host(page, bytes);
    return bytes;
}

inline std::uint64_t hash_of(const std::vector<std::byte>& bytes) { return vt::checksum64(bytes); }

inline ::testing::AssertionResult check_rows(Backend& backend, DeviceAddress data,
                                             const std::vector<std::byte>& want, std::uint64_t row,
                                             std::uint64_t pitch, std::uint64_t rows) {
    for (std::uint64_t y = 0; y < rows; ++y) {
        std::vector<std::byte> got(row);
        backend.read(got.data(), data + y * pitch, row);
        if (!std::equal(got.begin(), got.end(), want.begin() + y * pitch)) {
            return ::testing::AssertionFailure() << "differs from its source in row " << y;
        }
    }
    return ::testing::AssertionSuccess();
}

// Whether a ready page holds its source's bytes: a whole page; a packed tail its tail's tiles;
// a packed coarse level each row of its tiles, as far into the shared page as into its own (the
// tiles between its rows belong to other levels).
inline ::testing::AssertionResult ready_holds_page(Backend& backend, const vt::StreamedPage& ready,
                                                   const vt::TextureLayout& layout,
                                                   const std::vector<std::byte>& want) {
    const vt::TileFormatInfo format = layout.tile_format();
    std::uint64_t row = vt::page_bytes, pitch = vt::page_bytes, rows = 1;
    if (ready.layout_page == layout.tail_page()) {
        // A tail page that is its own may hold other textures' tails after its tiles.
        row = std::uint64_t(layout.mip_count - layout.tail_first_mip) * format.tile_bytes();
        if (!ready.packed()) return check_rows(backend, ready.data, want, row, pitch, rows);
    } else if (ready.packed()) {
        const vt::MipLevel& level = layout.mips[ready.mip];
        pitch = std::uint64_t(format.page_tiles_x) * format.tile_bytes();
        row = std::uint64_t(level.tiles_x) * format.tile_bytes();
        rows = level.tiles_y;
    }
    if (ready.bytes != (rows - 1) * pitch + row || ready.offset + ready.bytes > vt::page_bytes) {
        return ::testing::AssertionFailure()
               << "page " << ready.layout_page << ": " << ready.bytes << " bytes at offset "
               << ready.offset << " for its " << rows << " rows of " << row;
    }
    return check_rows(backend, ready.data, want, row, pitch, rows)
           << " (page " << ready.layout_page << ")";
}
// The page's bytes are found in its source's pages (source_location): a tile of a tile level is
// one tile of a source page, every other page the source page of the same place.
inline ::testing::AssertionResult ready_holds_source(Backend& backend,
                                                     const vt::StreamedPage& ready,
                                                     const vt::TileSource& source) {
    const vt::TextureLayout layout(source.shape());
    const vt::TileLocation from = vt::source_location(layout, source.layout(), ready.layout_page);
    const std::vector<std::byte> want = source_page(source, from.page);
    if (layout.tile_level(ready.mip)) {
        if (!ready.packed() || ready.bytes != from.tile_bytes) {
            return ::testing::AssertionFailure()
                   << "tile page " << ready.layout_page << ": " << ready.bytes
                   << " bytes at offset " << ready.offset << ", not one tile in a shared page";
        }
        const auto first = want.begin() + std::ptrdiff_t(from.byte_offset());
        const std::vector<std::byte> tile(first, first + from.tile_bytes);
        return check_rows(backend, ready.data, tile, from.tile_bytes, from.tile_bytes, 1)
               << " (tile page " << ready.layout_page << " of " << source.name() << ")";
    }
    return ready_holds_page(backend, ready, layout, want) << " (" << source.name() << ")";
}

// The settings the streamer suites start from: a 2 GiB region, a budget of `budget_pages`, a
// pool window 8 pages larger, silent logs.
// compute-sanitizer's initcheck loses the writes of copies that two streams make at the same
// time into one allocation, and then calls the bytes uninitialized (tests/cuda/initcheck_probe.cu
// shows it with CUDA alone; the bytes are right). Packed tails and levels share pages, so with
// VTPAGE_TEST_ONE_COPY_STREAM set (.ci/gpu-check sets it for initcheck) the streamer tests fill
// pages from one worker and one decode thread, each with its one stream.
inline std::size_t copy_threads(std::size_t wanted) {
    return std::getenv("VTPAGE_TEST_ONE_COPY_STREAM") ? 1 : wanted;
}

inline vt::StreamerSettings streamer_test_settings(std::size_t budget_pages) {
    vt::StreamerSettings s;
    s.worker_threads = copy_threads(s.worker_threads);
    s.file_reads.decode_threads = copy_threads(s.file_reads.decode_threads);
    s.table.region_size = 2_GiB;
    s.table.budget_bytes = budget_pages * vt::page_bytes;
    s.table.pool.window_pages = budget_pages + 8;
    s.table.log = Log(silent_log());
    s.log = Log(silent_log());
    return s;
}

// Whether every ready page of texture `id` holds its source's bytes (ready_holds_source);
// `checked` counts the ready pages looked at.
inline ::testing::AssertionResult ready_pages_hold_their_source(Backend& backend,
                                                                const vt::Streamer& streamer,
                                                                vt::TextureId id,
                                                                std::size_t& checked) {
    const vt::TextureInfo info = streamer.textures().info(id);
    for (std::uint64_t page = 0; page < info.layout.page_count; ++page) {
        const auto ready = streamer.ready_page(info.base_page + page);
        if (!ready) continue;
        if (auto held = ready_holds_source(backend, *ready, *info.source); !held) return held;
        ++checked;
    }
    return ::testing::AssertionSuccess();
}

// A deterministic test image: smooth gradients plus noise, so box filtering is exercised.
inline vt::RgbaImage make_test_image(std::uint32_t width, std::uint32_t height,
                                     std::uint32_t seed) {
    vt::RgbaImage image;
    image.width = width;
    image.height = height;
    image.texels.resize(std::size_t(width) * height * 4);
    std::uint32_t state = seed * 2654435761u + 1;
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            state = state * 1664525u + 1013904223u;
            std::uint8_t* t = &image.texels[(std::size_t(y) * width + x) * 4];
            t[0] = std::uint8_t(x * 255 / std::max(1u, width - 1));
            t[1] = std::uint8_t(y * 255 / std::max(1u, height - 1));
            t[2] = std::uint8_t(state >> 24);
            t[3] = std::uint8_t(255 - (state >> 28));
        }
    }
    return image;
}

// The reference mip chain of an image padded to side x side by repeating its last column and
// row: each level's RGBA8 texels.
inline std::vector<std::vector<std::uint8_t>> reference_mips(const vt::RgbaImage& image,
                                                             std::uint32_t side) {
    ReferenceLevel padded{side, side, std::vector<std::uint8_t>(std::size_t(side) * side * 4)};
    for (std::uint32_t y = 0; y < side; ++y) {
        for (std::uint32_t x = 0; x < side; ++x) {
            const std::uint32_t sx = std::min(x, image.width - 1),
                                sy = std::min(y, image.height - 1);
            std::memcpy(&padded.texels[(std::size_t(y) * side + x) * 4],
                        &image.texels[(std::size_t(sy) * image.width + sx) * 4], 4);
        }
    }
    std::vector<std::vector<std::uint8_t>> mips;
    for (ReferenceLevel& level : reference_levels(std::move(padded))) {
        mips.push_back(std::move(level.texels));
    }
    return mips;
}

// A baked texture of version 3 (a page archive) in rgba8, W x H as the image, written here in
// core and page by page (the bake tool's own tests are in tests/bake): what the streamer tests
// read.
inline void write_rgba8_archive(
    const vt::RgbaImage& image, const std::string& path,
    std::uint32_t parts_per_page = vt::page_archive_default_parts_per_page) {
    const vt::TextureShape shape{image.width, image.height, vt::TileFormat::rgba8};
    const vt::TextureLayout layout(shape);
    std::vector<ReferenceLevel> levels{{image.width, image.height, image.texels}};
    while (levels.size() < layout.mip_count) levels.push_back(next_reference_level(levels.back()));
    std::vector<std::vector<std::byte>> pages(layout.page_count,
                                              std::vector<std::byte>(vt::page_bytes));
    for (std::uint32_t mip = 0; mip < layout.mip_count; ++mip) {
        const ReferenceLevel& level = levels[mip];
        for (std::uint32_t ty = 0; ty < layout.mips[mip].tiles_y; ++ty) {
            for (std::uint32_t tx = 0; tx < layout.mips[mip].tiles_x; ++tx) {
                const vt::TileLocation where = layout.locate(mip, tx, ty);
                std::byte* tile = pages[where.page].data() + where.byte_offset();
                for (std::uint32_t y = 0; y < vt::tile_size; ++y) {
                    for (std::uint32_t x = 0; x < vt::tile_size; ++x) {
                        const std::uint32_t lx = vt::level_texel(tx, x, level.width),
                                            ly = vt::level_texel(ty, y, level.height);
                        std::memcpy(tile + vt::texel_offset(x, y),
                                    &level.texels[(std::size_t(ly) * level.width + lx) * 4], 4);
                    }
                }
            }
        }
    }
    const vt::BakedTextureDescriptor descriptor = vt::make_baked_texture_descriptor(shape, 8);
    vt::PageArchiveWriter writer(path, vt::baked_archive_shape(shape),
                                 std::as_bytes(std::span(&descriptor, 1)),
                                 {.parts_per_page = parts_per_page});
    for (std::uint64_t p = 0; p < layout.page_count; ++p) writer.add_page(p, pages[p]);
    writer.finish();
}

}  // namespace vtpage::test
