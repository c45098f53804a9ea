// The bake's stb input checks what stb_image (Debian's 2.26) cannot be trusted with before it
// sees the bytes: these are the cases the image fuzz target found, made from a valid JPEG.
#include <gtest/gtest.h>

#include <stb_image_write.h>

#include <cstdint>
#include <string>
#include <vector>

#include "image_input.hpp"

namespace vtpage::bake {
namespace {

std::vector<std::uint8_t> small_jpeg() {
    std::vector<std::uint8_t> rgba(16 * 8 * 4);
    for (std::size_t i = 0; i < rgba.size(); ++i) rgba[i] = std::uint8_t(i * 37);
    std::vector<std::uint8_t> out;
    stbi_write_jpg_to_func(
        [](void* context, void* data, int size) {
            auto* bytes = static_cast<std::vector<std::uint8_t>*>(context);
            const auto* begin = static_cast<const std::uint8_t*>(data);
            bytes->insert(bytes->end(), begin, begin + size);
        },
        &out, 16, 8, 4, rgba.data(), 90);
    return out;
}

// The offset of the first segment with this marker.
std::size_t find_marker(const std::vector<std::uint8_t>& bytes, std::uint8_t marker) {
    for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
        if (bytes[i] == 0xff && bytes[i + 1] == marker) return i;
    }
    return bytes.size();
}

// The detail of the corrupt_data error image_size throws for these bytes ("" for none).
std::string refusal(const std::vector<std::uint8_t>& bytes) {
    try {
        image_size(bytes, {});
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data) << error.what();
        return error.detail();
    }
    return {};
}

TEST(ImageInput, AValidJpegDecodes) {
    const std::vector<std::uint8_t> jpeg = small_jpeg();
    const ImageSize size = image_size(jpeg, {});
    EXPECT_EQ(size.width, 16u);
    EXPECT_EQ(size.height, 8u);
    EXPECT_EQ(decode_image(jpeg, {}).texels.size(), 16u * 8u * 4u);
}

TEST(ImageInput, AScanUsingAHuffmanTableThatWasNeverDefinedIsRefused) {
    for (const bool ac : {false, true}) {
        std::vector<std::uint8_t> jpeg = small_jpeg();
        const std::size_t sos = find_marker(jpeg, 0xda);
        ASSERT_LT(sos + 6, jpeg.size());
        // The first component's selector byte: DC table in the high nibble, AC in the low one.
        std::uint8_t& selector = jpeg[sos + 6];
        selector =
            ac ? std::uint8_t((selector & 0xf0) | 2) : std::uint8_t((selector & 0x0f) | 0x20);
        const std::string detail = refusal(jpeg);
        EXPECT_NE(detail.find(ac ? "AC Huffman table that was never defined"
                                 : "DC Huffman table that was never defined"),
                  std::string::npos)
            << detail;
    }
}

// A sequential (baseline) frame decodes every scan with both of its tables, whatever the
// scan's spectral selection says: a scan that claims to end at coefficient 0 still reads its AC
// table in stb.
TEST(ImageInput, ABaselineScanEndingAtTheDcCoefficientStillNeedsItsAcTable) {
    std::vector<std::uint8_t> jpeg = small_jpeg();
    const std::size_t sos = find_marker(jpeg, 0xda);
    ASSERT_LT(sos + 10, jpeg.size());
    const std::size_t components = jpeg[sos + 4];
    jpeg[sos + 6] = std::uint8_t((jpeg[sos + 6] & 0xf0) | 3);  // AC table 3: never defined
    jpeg[sos + 6 + 2 * components] = 0;                        // spectral selection ends at 0
    const std::string detail = refusal(jpeg);
    EXPECT_NE(detail.find("AC Huffman table that was never defined"), std::string::npos) << detail;
}

TEST(ImageInput, AHuffmanTableOfMoreThan256CodesIsRefused) {
    std::vector<std::uint8_t> jpeg = small_jpeg();
    const std::size_t dht = find_marker(jpeg, 0xc4);
    ASSERT_LT(dht + 21, jpeg.size());
    jpeg[dht + 5 + 14] = 200;  // codes of length 15 and 16: far more than 256 in all
    jpeg[dht + 5 + 15] = 200;
    const std::string detail = refusal(jpeg);
    EXPECT_NE(detail.find("more than 256 codes"), std::string::npos) << detail;
}

}  // namespace
}  // namespace vtpage::bake
