#include "image_input.hpp"

#include <fcntl.h>
#include <stb_image.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "vtpage/base/system_error.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage::bake {

namespace {

[[noreturn]] void io_failure(const std::string& path, const std::string& what, int error) {
    throw Error(Errc::io_error, "read_image_file", detail::concat(what, ": ", std::strerror(error)),
                detail::concat("path=", path), error, errno_name(error));
}

// stb_image reads lengths as int.
void check_length(std::span<const std::uint8_t> bytes, const char* operation) {
    if (bytes.size() > std::size_t(INT_MAX)) {
        throw Error(Errc::invalid_argument, operation, "images of 2 GiB or more cannot be decoded",
                    detail::concat("bytes=", bytes.size()));
    }
}

// Huffman tables a JPEG has defined so far: [class: 0 DC, 1 AC][id 0..3].
struct JpegTables {
    bool defined[2][4] = {};
    bool progressive = false;  // SOF2: a scan uses DC or AC tables; otherwise always both
};

// A DHT segment's tables (class/id, 16 counts, symbols), read as stb reads them: table after
// table while the segment's length lasts, past its end and the data's (as zeros). Debian's
// stb_image (2.26) writes past its Huffman size table for a table of more than 256 codes.
std::string jpeg_dht_problem(std::span<const std::uint8_t> bytes, std::size_t at,
                             std::size_t length, JpegTables& tables) {
    auto byte = [&](std::size_t i) -> std::size_t { return i < bytes.size() ? bytes[i] : 0; };
    std::ptrdiff_t left = std::ptrdiff_t(length) - 2;
    for (std::size_t table = at + 4; left > 0;) {
        std::size_t codes = 0;
        for (std::size_t i = 1; i <= 16; ++i) codes += byte(table + i);
        if (codes > 256) return "a JPEG Huffman table declares more than 256 codes";
        const std::size_t kind = byte(table) >> 4, id = byte(table) & 15;
        if (kind < 2 && id < 4) tables.defined[kind][id] = true;
        table += 17 + codes;
        left -= std::ptrdiff_t(17 + codes);
    }
    return {};
}

// A scan's components name the Huffman tables they decode with. Debian's stb_image (2.26) reads
// a table that was never defined as it finds it in memory, and indexes its symbols with codes
// from it (found by the image fuzz target). A sequential frame's scans decode with both of
// their tables whatever the spectral selection says; a progressive frame's DC tables serve
// scans that start at coefficient 0, its AC tables scans that go past it.
std::string jpeg_sos_problem(std::span<const std::uint8_t> bytes, std::size_t at,
                             const JpegTables& tables) {
    auto byte = [&](std::size_t i) -> std::size_t { return i < bytes.size() ? bytes[i] : 0; };
    const std::size_t components = byte(at + 4);
    const std::size_t spectral_start = byte(at + 5 + 2 * components);
    const std::size_t spectral_end = byte(at + 6 + 2 * components);
    for (std::size_t c = 0; c < components; ++c) {
        const std::size_t dc = byte(at + 6 + 2 * c) >> 4, ac = byte(at + 6 + 2 * c) & 15;
        const bool uses_dc = !tables.progressive || spectral_start == 0;
        const bool uses_ac = !tables.progressive || spectral_end > 0;
        if (uses_dc && (dc > 3 || !tables.defined[0][dc])) {
            return "a JPEG scan uses a DC Huffman table that was never defined";
        }
        if (uses_ac && (ac > 3 || !tables.defined[1][ac])) {
            return "a JPEG scan uses an AC Huffman table that was never defined";
        }
    }
    return {};
}

// What in a JPEG's tables stb cannot be trusted with, or nothing (also for bytes that are not
// a JPEG). Every DHT and SOS segment, before and between scans, is checked before stb sees the
// bytes.
std::string jpeg_table_problem(std::span<const std::uint8_t> bytes) {
    // A JPEG to stb: 0xff, any number of 0xff fill bytes, then SOI (0xd8).
    std::size_t at = 1;
    while (at < bytes.size() && bytes[at] == 0xff) ++at;
    if (bytes.empty() || bytes[0] != 0xff || at >= bytes.size() || bytes[at] != 0xd8) return {};
    ++at;
    JpegTables tables;
    while (at + 4 <= bytes.size()) {
        if (bytes[at] != 0xff) {  // entropy-coded data (after SOS): skip to the next marker
            ++at;
            continue;
        }
        const std::uint8_t marker = bytes[at + 1];
        // Fill bytes, stuffed zeros, restart markers and SOI/EOI/TEM carry no length.
        if (marker == 0xff || marker == 0x00 || (marker >= 0xd0 && marker <= 0xd9) ||
            marker == 0x01) {
            at += marker == 0xff ? 1 : 2;
            continue;
        }
        const std::size_t length = std::size_t(bytes[at + 2]) << 8 | bytes[at + 3];
        std::string problem;
        if (marker == 0xc4) problem = jpeg_dht_problem(bytes, at, length, tables);
        if (marker == 0xda) problem = jpeg_sos_problem(bytes, at, tables);
        if (marker == 0xc2) tables.progressive = true;
        if (!problem.empty()) return problem;
        at = at + 2 + std::max<std::size_t>(length, 2);
    }
    return {};
}

// Debian's stb_image (2.26) grows its IDAT buffer to the length a chunk declares before it
// reads the chunk, so a 200-byte PNG can make it allocate 2 GiB (found by the image fuzz
// target). Every chunk up to IEND must fit in the bytes there are before stb sees them.
bool png_chunks_fit(std::span<const std::uint8_t> bytes) {
    static constexpr std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    if (bytes.size() < 8 || !std::equal(signature, signature + 8, bytes.begin())) return true;
    std::size_t at = 8;
    while (at + 8 <= bytes.size()) {
        const std::uint64_t length = std::uint64_t(bytes[at]) << 24 |
                                     std::uint64_t(bytes[at + 1]) << 16 |
                                     std::uint64_t(bytes[at + 2]) << 8 | bytes[at + 3];
        const bool end = std::memcmp(&bytes[at + 4], "IEND", 4) == 0;
        // length, type, data and CRC
        if (length + 12 > bytes.size() - at) return false;
        if (end) return true;
        at += std::size_t(length) + 12;
    }
    return true;  // the data ends between chunks: stb reports that itself
}

}  // namespace

std::vector<std::uint8_t> read_image_file(const std::string& path, const ImageLimits& limits) {
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer. Regular files ignore it.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) io_failure(path, "cannot open", errno);
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) io_failure(path, "cannot stat", errno);
    if (!S_ISREG(info.st_mode)) {
        throw Error(Errc::io_error, "read_image_file",
                    "not a regular file (a FIFO, device or folder cannot be an image)",
                    detail::concat("path=", path), EINVAL, errno_name(EINVAL));
    }
    const std::uint64_t size = std::uint64_t(info.st_size);
    if (size > limits.max_file_bytes) {
        throw Error(Errc::invalid_argument, "read_image_file",
                    detail::concat("the file has ", size, " bytes, more than the limit of ",
                                   limits.max_file_bytes),
                    detail::concat("path=", path));
    }
    std::vector<std::uint8_t> bytes(size);
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) io_failure(path, "read failed", errno);
        if (n == 0) break;  // the file shrank while read: decode what there is
        done += std::size_t(n);
    }
    bytes.resize(done);
    return bytes;
}

ImageSize image_size(std::span<const std::uint8_t> bytes, const ImageLimits& limits) {
    check_length(bytes, "image_size");
    // Before stb reads anything: reading the header alone builds the Huffman tables.
    if (const std::string problem = jpeg_table_problem(bytes); !problem.empty()) {
        throw Error(Errc::corrupt_data, "image_size", "cannot read the image: " + problem);
    }
    if (!png_chunks_fit(bytes)) {
        throw Error(Errc::corrupt_data, "image_size",
                    "cannot read the image: a PNG chunk declares more bytes than the file has");
    }
    int width = 0, height = 0, channels = 0;
    if (!stbi_info_from_memory(bytes.data(), int(bytes.size()), &width, &height, &channels)) {
        throw Error(Errc::corrupt_data, "image_size",
                    detail::concat("cannot read the image: ", stbi_failure_reason()));
    }
    const auto w = std::uint64_t(width), h = std::uint64_t(height);
    if (width <= 0 || height <= 0 || w > limits.max_side || h > limits.max_side ||
        w * h > limits.max_texels) {
        throw Error(Errc::invalid_argument, "image_size",
                    detail::concat("a ", width, " x ", height, " image is over the limits (",
                                   limits.max_side, " texels a side, ", limits.max_texels,
                                   " texels in all)"),
                    detail::concat("width=", width, ", height=", height));
    }
    return {std::uint32_t(width), std::uint32_t(height)};
}

vt::RgbaImage decode_image(std::span<const std::uint8_t> bytes, const ImageLimits& limits) {
    const ImageSize size = image_size(bytes, limits);
    int width = 0, height = 0, channels = 0;
    std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
        stbi_load_from_memory(bytes.data(), int(bytes.size()), &width, &height, &channels, 4),
        stbi_image_free);
    if (!pixels) {
        throw Error(Errc::corrupt_data, "decode_image",
                    detail::concat("cannot decode the image: ", stbi_failure_reason()));
    }
    // The decoder is trusted only as far as the header it was checked against.
    if (std::uint32_t(width) != size.width || std::uint32_t(height) != size.height) {
        throw Error(Errc::corrupt_data, "decode_image",
                    detail::concat("the image decodes to ", width, " x ", height,
                                   ", its header says ", size.width, " x ", size.height));
    }
    vt::RgbaImage image;
    image.width = size.width;
    image.height = size.height;
    image.texels.assign(pixels.get(), pixels.get() + std::size_t(width) * height * 4);
    return image;
}

}  // namespace vtpage::bake
