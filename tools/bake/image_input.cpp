#include "image_input.hpp"

#include <fcntl.h>
#include <stb_image.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>

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
        throw Error(Errc::invalid_argument, operation,
                    "images of 2 GiB or more cannot be decoded",
                    detail::concat("bytes=", bytes.size()));
    }
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
