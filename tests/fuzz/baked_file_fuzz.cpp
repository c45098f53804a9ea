// Fuzzes the baked texture reader (BakedTextureFile) with arbitrary files. A valid file is at
// least one 2 MiB page, far past what a fuzzer mutates well, so the input is laid over a small
// valid file baked at start-up:
//   input that starts with the magic   replaces the file's first bytes (header, checksum table,
//                                      padding, then the start of the data); the header and
//                                      table checksums are then recomputed unless the input's
//                                      length is odd, so that the checks behind them are
//                                      reached as well as the checksums themselves
//   any other input                    is the whole file (short, truncated, foreign files)
// Opening, check_all() and verify_page() must either succeed or throw vtpage::Error.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_files.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::vt;

// The template: corpus/vips_image_reader/rgba-7x5.png baked once (one page, all of it the mip
// tail), so that corpus/baked_file/prefix-4096, that file's first bytes, makes it whole.
const std::vector<std::uint8_t>& template_file() {
    static const std::vector<std::uint8_t> bytes = [] {
        RgbaImage image;
        image.width = 7;
        image.height = 5;
        for (std::uint32_t y = 0; y < 5; ++y) {
            for (std::uint32_t x = 0; x < 7; ++x) {
                for (std::uint32_t c = 0; c < 4; ++c) {
                    image.texels.push_back(std::uint8_t(x * 31 + y * 17 + c));
                }
            }
        }
        return fuzz::bytes_written_by([&](const std::string& path) { bake_texture(image, path); });
    }();
    return bytes;
}

// The file the input describes (see the top of this file).
std::vector<std::uint8_t> file_for(const std::uint8_t* data, std::size_t size) {
    if (size < sizeof(baked_magic) || std::memcmp(data, baked_magic, sizeof(baked_magic)) != 0) {
        return {data, data + size};
    }
    std::vector<std::uint8_t> file = template_file();
    std::memcpy(file.data(), data, std::min(size, file.size()));
    if (size % 2 == 0 && file.size() >= sizeof(BakedHeader)) {
        BakedHeader header;
        std::memcpy(&header, file.data(), sizeof(header));
        const std::uint64_t table = header.page_count * tiles_per_page * 8;
        const std::uint64_t offset = header.checksum_offset;
        if (offset <= file.size() && table <= file.size() - offset) {
            header.table_checksum =
                checksum64(std::as_bytes(std::span(file.data() + offset, std::size_t(table))));
        }
        header.header_checksum = 0;
        header.header_checksum = checksum64(std::as_bytes(std::span(&header, 1)));
        std::memcpy(file.data(), &header, sizeof(header));
    }
    return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::vector<std::uint8_t> file = file_for(data, size);
    const fuzz::MemoryFile memory(file);
    try {
        const BakedTextureFile baked(memory.path());
        baked.check_all();
        std::vector<std::byte> page(page_bytes);
        baked.read_page(0, page, false);
        baked.verify_page(0, page);
        baked.verify_page(baked.header().page_count, page);  // must throw out_of_range
        std::abort();
    } catch (const Error&) {}
    return 0;
}
