#include "vips_image_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vips/vips.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/unique_fd.hpp"

namespace vtpage::bake {

namespace {

// libvips' message for the failure just reported, which also empties its error buffer.
std::string take_vips_error() {
    char* text = vips_error_buffer_copy();
    std::string message = text ? text : "";
    g_free(text);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
        message.pop_back();
    }
    return message.empty() ? "libvips gave no reason" : message;
}

[[noreturn]] void vips_failure(Errc code, const char* operation, const std::string& what,
                               const std::string& path) {
    throw Error(code, operation, detail::concat(what, ": ", take_vips_error()),
                detail::concat("path=", path));
}

}  // namespace

// The operation cache is off: a bake reads each file once, and cached operations would keep
// their images (and memory) alive.
void initialise_vips() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (VIPS_INIT("vtpage-bake") != 0) {
            throw Error(Errc::backend_failure, "VipsImageReader",
                        detail::concat("libvips failed to start: ", take_vips_error()));
        }
        vips_cache_set_max(0);
        vips_block_untrusted_set(TRUE);
    });
}

void allow_untrusted_loaders(bool allow) {
    initialise_vips();
    vips_block_untrusted_set(allow ? FALSE : TRUE);
}

namespace {

[[noreturn]] void throw_empty(const std::string& path) {
    throw Error(Errc::corrupt_data, "VipsImageReader", "an empty file is no image",
                detail::concat("path=", path));
}

// libvips would block opening a FIFO (and never end reading a device), and its message for a
// missing file does not say so: the file is opened and looked at first.
UniqueFd open_regular_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat status {};
    if (!fd || ::fstat(fd.get(), &status) != 0) {
        const int error = errno;
        throw Error(Errc::io_error, "VipsImageReader",
                    detail::concat("cannot open the file: ", errno_message(error)),
                    detail::concat("path=", path), error, errno_name(error));
    }
    if (!S_ISREG(status.st_mode)) {
        throw Error(Errc::io_error, "VipsImageReader",
                    "not a regular file (a FIFO, device or folder cannot be an image)",
                    detail::concat("path=", path), EINVAL, errno_name(EINVAL));
    }
    // libvips' source cannot map an empty file and asserts on what follows.
    if (status.st_size == 0) throw_empty(path);
    return fd;
}

struct ImageDeleter {
    void operator()(VipsImage* image) const { g_object_unref(image); }
};
using ImagePtr = std::unique_ptr<VipsImage, ImageDeleter>;

// Steps of the pipeline from the file's image to one of 1 to 4 bands of 8 or 16 bits in grey or
// sRGB, which read_rows turns into RGBA8 itself (so that 16-bit scaling is exact and known).
using Step = int (*)(VipsImage* in, VipsImage** out);

int to_srgb(VipsImage* in, VipsImage** out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, nullptr);
}
int to_uchar(VipsImage* in, VipsImage** out) {
    return vips_cast(in, out, VIPS_FORMAT_UCHAR, nullptr);
}
int first_four_bands(VipsImage* in, VipsImage** out) {
    return vips_extract_band(in, out, 0, "n", 4, nullptr);
}

bool grey_or_rgb(VipsInterpretation interpretation) {
    switch (interpretation) {
        case VIPS_INTERPRETATION_B_W:
        case VIPS_INTERPRETATION_GREY16:
        case VIPS_INTERPRETATION_sRGB:
        case VIPS_INTERPRETATION_RGB16:
        case VIPS_INTERPRETATION_MULTIBAND:
            return true;
        default:
            return false;
    }
}

ImagePtr apply(ImagePtr in, Step step, const std::string& path) {
    VipsImage* out = nullptr;
    if (step(in.get(), &out) != 0) {
        vips_failure(Errc::corrupt_data, "VipsImageReader", "cannot convert the image to RGBA8",
                     path);
    }
    return ImagePtr(out);
}

ImagePtr displayable(ImagePtr image, const std::string& path) {
    if (!grey_or_rgb(vips_image_guess_interpretation(image.get()))) {
        image = apply(std::move(image), to_srgb, path);  // CMYK, Lab, XYZ, scRGB, ...
    }
    const VipsBandFormat format = image->BandFmt;
    if (format != VIPS_FORMAT_UCHAR && format != VIPS_FORMAT_USHORT) {
        image = apply(std::move(image), to_uchar, path);
    }
    if (image->Bands > 4) image = apply(std::move(image), first_four_bands, path);
    return image;
}

std::uint8_t eight_bits(std::uint8_t value) { return value; }
std::uint8_t eight_bits(std::uint16_t value) {
    return std::uint8_t((std::uint32_t(value) * 255 + 32767) / 65535);
}

// One row of `bands` samples a texel into RGBA8: grey replicated, alpha 255 where there is none.
template <int bands, typename Sample>
void row_to_rgba(const void* row, std::uint32_t width, std::uint8_t* out) {
    const auto* in = static_cast<const Sample*>(row);
    for (std::uint32_t x = 0; x < width; ++x, in += bands, out += 4) {
        const std::uint8_t first = eight_bits(in[0]);
        out[0] = first;
        out[1] = bands >= 3 ? eight_bits(in[1]) : first;
        out[2] = bands >= 3 ? eight_bits(in[2]) : first;
        out[3] = bands == 2 ? eight_bits(in[1]) : bands == 4 ? eight_bits(in[3]) : 255;
    }
}

template <typename Sample>
void row_to_rgba(int bands, const void* row, std::uint32_t width, std::uint8_t* out) {
    switch (bands) {
        case 1:
            return row_to_rgba<1, Sample>(row, width, out);
        case 2:
            return row_to_rgba<2, Sample>(row, width, out);
        case 3:
            return row_to_rgba<3, Sample>(row, width, out);
        default:
            return row_to_rgba<4, Sample>(row, width, out);
    }
}

}  // namespace

struct VipsImageReader::Pipeline {
    UniqueFd file;  // the image, read by libvips through this descriptor only
    VipsSource* source = nullptr;
    ImagePtr image;  // 1 to 4 bands of uchar or ushort
    VipsRegion* region = nullptr;

    ~Pipeline() {
        if (region) g_object_unref(region);
        image.reset();
        if (source) g_object_unref(source);
    }
};

namespace {

// Sequential access: the loader decodes rows as they are asked for and keeps only a few.
// fail_on error: a truncated or damaged file is an error, not rows of grey.
ImagePtr open_image(VipsSource* source, const std::string& path) {
    VipsImage* image = vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                                  "fail_on", VIPS_FAIL_ON_ERROR, nullptr);
    if (!image) {
        vips_failure(Errc::corrupt_data, "VipsImageReader",
                     "cannot load the image (vtpage-bake reads JPEG, PNG, WebP, TIFF, GIF and "
                     "HEIF; other formats need --allow-untrusted-loaders)",
                     path);
    }
    return ImagePtr(image);
}

// The first bytes of the image, where the headers below are found.
std::vector<std::uint8_t> read_prefix(int fd) {
    std::vector<std::uint8_t> bytes(std::size_t(1) << 16);
    const ssize_t got = ::pread(fd, bytes.data(), bytes.size(), 0);
    bytes.resize(got > 0 ? std::size_t(got) : 0);
    return bytes;
}

// Whether a JPEG's frame is progressive (SOF2, 6, 10 or 14 before the first scan): libjpeg then
// keeps every coefficient of the image until the last scan.
bool progressive_jpeg(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8) return false;
    std::size_t at = 2;
    while (at + 4 <= bytes.size()) {
        if (bytes[at] != 0xFF) return false;
        const std::uint8_t marker = bytes[at + 1];
        if (marker == 0xFF) {  // fill byte
            ++at;
            continue;
        }
        if (marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE) return true;
        if ((marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
             marker != 0xCC) ||
            marker == 0xDA) {
            return false;  // another frame type, or the first scan
        }
        at += 2 + ((std::size_t(bytes[at + 2]) << 8) | bytes[at + 3]);
    }
    return false;
}

// Whether a PNG is interlaced (IHDR's interlace method): libspng then decodes it whole.
bool interlaced_png(std::span<const std::uint8_t> bytes) {
    static constexpr std::uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    return bytes.size() > 28 &&
           std::equal(std::begin(signature), std::end(signature), bytes.begin()) && bytes[28] != 0;
}

// The memory a loader takes at once beyond the rows asked for (VipsImageInfo::decode_bytes).
std::uint64_t decode_bytes(const VipsImageInfo& info, std::span<const std::uint8_t> prefix) {
    const std::uint64_t texels = std::uint64_t(info.width) * info.height;
    const std::uint64_t frame = texels * info.bands * (info.bits_per_sample / 8);
    const std::string& loader = info.loader;
    auto is = [&](const char* name) { return loader.starts_with(name); };
    if (is("jpegload")) return progressive_jpeg(prefix) ? texels * info.bands * 2 : 0;
    if (is("pngload")) return interlaced_png(prefix) ? frame : 0;
    if (is("tiffload")) return 0;              // strips and tiles, one at a time
    if (is("gifload")) return texels * 4 * 2;  // the frame and the one before it, RGBA
    return std::max(frame, texels * 4);        // WebP, HEIF and untrusted loaders: whole frames
}

VipsImageInfo describe(VipsImage* image) {
    VipsImageInfo info;
    info.width = std::uint32_t(vips_image_get_width(image));
    info.height = std::uint32_t(vips_image_get_height(image));
    info.bands = std::uint32_t(vips_image_get_bands(image));
    info.bits_per_sample = std::uint32_t(vips_format_sizeof(image->BandFmt) * 8);
    info.has_alpha = vips_image_hasalpha(image);
    const char* loader = nullptr;
    if (vips_image_get_typeof(image, "vips-loader") &&
        vips_image_get_string(image, "vips-loader", &loader) == 0 && loader) {
        info.loader = loader;
        // Every image is loaded from a source: "pngload_source" is the PNG loader.
        if (info.loader.ends_with("_source")) info.loader.resize(info.loader.size() - 7);
    }
    return info;
}

}  // namespace

VipsImageReader::VipsImageReader(const std::string& path) : path_(path) {
    initialise_vips();
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->file = open_regular_file(path);
    pipeline->source = vips_source_new_from_descriptor(pipeline->file.get());
    if (!pipeline->source) {
        vips_failure(Errc::io_error, "VipsImageReader", "cannot read the file", path);
    }
    const std::vector<std::uint8_t> prefix = read_prefix(pipeline->file.get());
    open(std::move(pipeline), prefix);
}

VipsImageReader::VipsImageReader(std::span<const std::uint8_t> bytes) : path_("<memory>") {
    initialise_vips();
    if (bytes.empty()) throw_empty(path_);
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->source = vips_source_new_from_memory(bytes.data(), bytes.size());
    if (!pipeline->source) {
        vips_failure(Errc::corrupt_data, "VipsImageReader", "cannot read the image", path_);
    }
    open(std::move(pipeline), bytes.first(std::min(bytes.size(), std::size_t(1) << 16)));
}

void VipsImageReader::open(std::unique_ptr<Pipeline> pipeline,
                           std::span<const std::uint8_t> prefix) {
    const std::string& path = path_;
    ImagePtr image = open_image(pipeline->source, path);
    info_ = describe(image.get());
    info_.decode_bytes = decode_bytes(info_, prefix);
    if (info_.width == 0 || info_.height == 0 || info_.width > max_side ||
        info_.height > max_side) {
        throw Error(Errc::invalid_argument, "VipsImageReader",
                    detail::concat("a ", info_.width, " x ", info_.height, " image: each side ",
                                   "must be 1 to ", max_side, " texels"),
                    detail::concat("path=", path));
    }
    pipeline_ = std::move(pipeline);
    pipeline_->image = displayable(std::move(image), path);
    pipeline_->region = vips_region_new(pipeline_->image.get());
    if (!pipeline_->region) {
        vips_failure(Errc::corrupt_data, "VipsImageReader", "cannot read the image", path);
    }
}

VipsImageReader::~VipsImageReader() = default;
VipsImageReader::VipsImageReader(VipsImageReader&&) noexcept = default;
VipsImageReader& VipsImageReader::operator=(VipsImageReader&&) noexcept = default;

void VipsImageReader::read_rows(std::uint32_t count, std::span<std::uint8_t> out) {
    const std::size_t row_bytes = std::size_t(info_.width) * 4;
    if (!pipeline_ || count > info_.height - rows_read_ || out.size() != count * row_bytes) {
        throw Error(Errc::invalid_argument, "VipsImageReader::read_rows",
                    detail::concat(count, " rows into ", out.size(), " bytes: rows of ", row_bytes,
                                   " bytes, ", info_.height - rows_read_, " rows left"),
                    detail::concat("path=", path_));
    }
    if (count == 0) return;
    VipsRect rows{0, int(rows_read_), int(info_.width), int(count)};
    if (vips_region_prepare(pipeline_->region, &rows) != 0) {
        vips_failure(
            Errc::corrupt_data, "VipsImageReader::read_rows",
            detail::concat("cannot decode rows ", rows_read_, " to ", rows_read_ + count - 1),
            path_);
    }
    const int bands = pipeline_->image->Bands;
    const bool sixteen = pipeline_->image->BandFmt == VIPS_FORMAT_USHORT;
    for (std::uint32_t i = 0; i < count; ++i) {
        const void* row = VIPS_REGION_ADDR(pipeline_->region, 0, int(rows_read_ + i));
        std::uint8_t* target = out.data() + i * row_bytes;
        if (sixteen) {
            row_to_rgba<std::uint16_t>(bands, row, info_.width, target);
        } else {
            row_to_rgba<std::uint8_t>(bands, row, info_.width, target);
        }
    }
    rows_read_ += count;
}

}  // namespace vtpage::bake
