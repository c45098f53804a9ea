#include "vips_test_images.hpp"

#include <stdexcept>

#include "vips_image_reader.hpp"

namespace vtpage::test {

namespace {

[[noreturn]] void vips_failed(const std::string& what) {
    const std::string message = what + ": " + vips_error_buffer();
    vips_error_clear();
    throw std::runtime_error(message);
}

}  // namespace

void save_image(const SampleImage& image, const std::string& path, const Saver& saver) {
    bake::initialise_vips();
    VipsImage* in =
        vips_image_new_from_memory_copy(image.bytes.data(), image.bytes.size(), int(image.width),
                                        int(image.height), int(image.bands), image.format);
    if (!in) vips_failed("cannot make the image");
    in->Type = image.interpretation;
    const int failed = saver(in, path.c_str());
    g_object_unref(in);
    if (failed) vips_failed("cannot save " + path);
}

void save_pattern_tiff(const std::string& path, std::uint32_t width, std::uint32_t height) {
    bake::initialise_vips();
    VipsImage* base = vips_image_new();
    auto** t = reinterpret_cast<VipsImage**>(vips_object_local_array(VIPS_OBJECT(base), 4));
    // Bands: a ramp across, the same ramp mirrored, the ramp again.
    const bool failed = vips_grey(&t[0], int(width), int(height), "uchar", TRUE, nullptr) ||
                        vips_flip(t[0], &t[1], VIPS_DIRECTION_HORIZONTAL, nullptr) ||
                        vips_bandjoin2(t[0], t[1], &t[2], nullptr) ||
                        vips_bandjoin2(t[2], t[0], &t[3], nullptr) ||
                        vips_tiffsave(t[3], path.c_str(), "compression",
                                      VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE, nullptr);
    g_object_unref(base);
    if (failed) vips_failed("cannot write " + path);
}

bool has_vips_operation(const char* name) {
    bake::initialise_vips();
    return vips_type_find("VipsOperation", name) != 0;
}

}  // namespace vtpage::test
