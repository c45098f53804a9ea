// Fuzzes the bake tool's image input (tools/bake/image_input.hpp) with arbitrary file bytes:
// the header is read, the shape checked against limits and the bake settings, and the image
// decoded; every failure must be a vtpage::Error. The limits are small (1024 texels a side,
// 2^20 texels in all) so that the fuzzer looks for bugs in the decoding, not for images that
// are merely large.
#include <cstddef>
#include <cstdint>
#include <span>

#include "image_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vtpage;
    bake::ImageLimits limits;
    limits.max_side = 1024;
    limits.max_texels = std::uint64_t(1) << 20;
    const std::span<const std::uint8_t> bytes(data, size);
    try {
        const bake::ImageSize shape = bake::image_size(bytes, limits);
        vt::check_bake_shape(shape.width, shape.height, vt::BakeSettings{});
        const vt::RgbaImage image = bake::decode_image(bytes, limits);
        if (image.texels.size() != std::size_t(image.width) * image.height * 4) __builtin_trap();
        // The padding step of the bake, which trusts the decoded image's size.
        (void)vt::pad_to_square_power_of_two(image);
    } catch (const Error&) {
        // refused: a bad or oversized image
    }
    return 0;
}
