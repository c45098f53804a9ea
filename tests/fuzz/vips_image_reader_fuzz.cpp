// Fuzzes what vtpage-bake runs on an image: VipsImageReader from the input's bytes (libvips'
// loaders behind the untrusted block, as the tool sets them), its header checks, the memory
// check of the bake (check_bake_limits allowing 64 MiB beyond the bake's own memory, so that
// images libvips would decode whole are refused as the tool refuses large ones), and every row read
// as RGBA8. Every failure must be a vtpage::Error; rows must come as asked.
//
// Debian's libvips and the libraries behind it are not built with the sanitizers, so this
// checks vtpage's handling of what libvips returns (shapes, band counts, sample formats, errors
// in the middle of the rows), not libvips itself: what guards libvips is the untrusted block,
// which keeps the loaders no one fuzzes away from the bake.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "texture_baker.hpp"
#include "vips_image_reader.hpp"
#include "vtpage/base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vtpage;
    try {
        bake::VipsImageReader reader(std::span(data, size));
        const bake::VipsImageInfo& info = reader.info();
        if (info.width == 0 || info.height == 0 || info.width > bake::VipsImageReader::max_side ||
            info.height > bake::VipsImageReader::max_side) {
            std::abort();  // the reader must have refused this shape
        }
        bake::TextureBakeSettings settings;
        settings.format = vt::TileFormat::rgba8;
        settings.max_memory_bytes =
            bake::bake_memory_bytes(info.width, settings.format) + (std::uint64_t(64) << 20);
        bake::check_bake_limits(info, settings);
        // The bake's rows 16 at a time, the last piece shorter; at most 2^22 texels in all, so
        // that the fuzzer looks for bugs in the reading, not images that are merely large.
        if (std::uint64_t(info.width) * info.height > (std::uint64_t(1) << 22)) return 0;
        std::vector<std::uint8_t> rows(std::size_t(16) * info.width * 4);
        for (std::uint32_t y = 0; y < info.height; y += 16) {
            const std::uint32_t count = std::min(16u, info.height - y);
            reader.read_rows(count, std::span(rows).first(std::size_t(count) * info.width * 4));
        }
        if (reader.rows_read() != info.height) std::abort();
    } catch (const Error&) {
        // refused: bytes libvips cannot load, a shape or memory past the limits
    }
    return 0;
}
