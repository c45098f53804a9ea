// The libvips reader on files that libvips writes here: every texel as RGBA8 (exact where the
// format is lossless), the image's description, and the typed error for each kind of bad file.
#include "vips_image_reader.hpp"
#include "vips_under_thread_sanitizer.hpp"

#include <gtest/gtest.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "../support/expect_error.hpp"
#include "../support/pattern.hpp"
#include "../support/temporary_folder.hpp"
#include "vips_test_images.hpp"

namespace vtpage::bake {
namespace {

using test::SampleImage;

struct Read {
    VipsImageInfo info;
    std::vector<std::uint8_t> rgba;
};

// Opens and reads every row, 5 rows at a time (the last piece shorter).
Read read_all(const std::string& path) {
    VipsImageReader reader(path);
    Read read{reader.info(), {}};
    const std::size_t row_bytes = std::size_t(read.info.width) * 4;
    read.rgba.resize(row_bytes * read.info.height);
    for (std::uint32_t y = 0; y < read.info.height; y += 5) {
        const std::uint32_t count = std::min(5u, read.info.height - y);
        reader.read_rows(count, std::span(read.rgba).subspan(y * row_bytes, count * row_bytes));
    }
    EXPECT_EQ(reader.rows_read(), read.info.height);
    return read;
}

// 8-bit samples from f(x, y, band).
template <typename F>
SampleImage eight_bit(std::uint32_t width, std::uint32_t height, std::uint32_t bands,
                      VipsInterpretation interpretation, F f) {
    SampleImage image{width, height, bands, VIPS_FORMAT_UCHAR, interpretation, {}};
    for (std::uint32_t y = 0; y < height; ++y) {
        for (std::uint32_t x = 0; x < width; ++x) {
            for (std::uint32_t b = 0; b < bands; ++b) image.bytes.push_back(f(x, y, b));
        }
    }
    return image;
}

std::uint8_t busy(std::uint32_t x, std::uint32_t y, std::uint32_t b) {
    return std::uint8_t(test::pattern_word((y * 1000 + x) * 4 + b, 3));
}
std::uint8_t smooth(std::uint32_t x, std::uint32_t y, std::uint32_t b) {
    return std::uint8_t(40 + 2 * x + y + 30 * b);
}

// The RGBA8 the reader should give for 8-bit samples: grey replicated, alpha 255 if none.
std::vector<std::uint8_t> expected_rgba(const SampleImage& image) {
    std::vector<std::uint8_t> rgba;
    const std::uint32_t bands = image.bands;
    for (std::size_t i = 0; i < image.bytes.size(); i += bands) {
        const std::uint8_t* s = &image.bytes[i];
        const bool colour = bands >= 3;
        rgba.insert(rgba.end(), {s[0], colour ? s[1] : s[0], colour ? s[2] : s[0],
                                 bands == 2   ? s[1]
                                 : bands == 4 ? s[3]
                                              : std::uint8_t(255)});
    }
    return rgba;
}

int largest_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    EXPECT_EQ(a.size(), b.size());
    int largest = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        largest = std::max(largest, std::abs(int(a[i]) - int(b[i])));
    }
    return largest;
}

class VipsImageReaderTest : public testing::Test {
protected:
    void SetUp() override { VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER(); }
    test::TemporaryFolder folder;
};

TEST_F(VipsImageReaderTest, Png8BitRgbaIsExact) {
    const SampleImage image = eight_bit(37, 23, 4, VIPS_INTERPRETATION_sRGB, busy);
    const std::string path = folder.file("rgba.png");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.width, 37u);
    EXPECT_EQ(read.info.height, 23u);
    EXPECT_EQ(read.info.bands, 4u);
    EXPECT_EQ(read.info.bits_per_sample, 8u);
    EXPECT_TRUE(read.info.has_alpha);
    EXPECT_EQ(read.info.loader, "pngload");
    EXPECT_TRUE(read.rgba == expected_rgba(image));
}

TEST_F(VipsImageReaderTest, GreyWithAlphaIsReplicated) {
    const SampleImage image = eight_bit(19, 11, 2, VIPS_INTERPRETATION_B_W, busy);
    const std::string path = folder.file("grey-alpha.png");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.bands, 2u);
    EXPECT_TRUE(read.info.has_alpha);
    EXPECT_TRUE(read.rgba == expected_rgba(image));
}

// 16 bits to 8 rounds to nearest: 200 is 1 (a shift by 8 would give 0), 65535 is 255.
TEST_F(VipsImageReaderTest, Png16BitGreyIsScaledExactly) {
    SampleImage image{31, 17, 1, VIPS_FORMAT_USHORT, VIPS_INTERPRETATION_GREY16, {}};
    std::vector<std::uint8_t> expected;
    for (std::uint32_t i = 0; i < image.width * image.height; ++i) {
        const std::uint16_t v = i == 0   ? 65535
                                : i == 1 ? 200
                                         : std::uint16_t(test::pattern_word(i, 5));
        image.bytes.resize(image.bytes.size() + 2);
        std::memcpy(&image.bytes[image.bytes.size() - 2], &v, 2);
        const auto eight = std::uint8_t(std::lround(v * 255.0 / 65535.0));
        expected.insert(expected.end(), {eight, eight, eight, 255});
    }
    const std::string path = folder.file("grey16.png");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.bands, 1u);
    EXPECT_EQ(read.info.bits_per_sample, 16u);
    EXPECT_FALSE(read.info.has_alpha);
    ASSERT_EQ(read.rgba.size(), expected.size());
    EXPECT_EQ(read.rgba[0], 255);
    EXPECT_EQ(read.rgba[4], 1);
    EXPECT_TRUE(read.rgba == expected);
}

TEST_F(VipsImageReaderTest, JpegIsCloseAndOpaque) {
    const SampleImage image = eight_bit(32, 24, 3, VIPS_INTERPRETATION_sRGB, smooth);
    const std::string path = folder.file("smooth.jpg");
    test::save_image(image, path, [](VipsImage* in, const char* to) {
        return vips_jpegsave(in, to, "Q", 95, nullptr);
    });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.loader, "jpegload");
    EXPECT_EQ(read.info.bands, 3u);
    EXPECT_FALSE(read.info.has_alpha);
    EXPECT_LE(largest_difference(read.rgba, expected_rgba(image)), 8);
}

TEST_F(VipsImageReaderTest, TiffTiledAndStrippedAreExact) {
    const SampleImage image = eight_bit(50, 41, 3, VIPS_INTERPRETATION_sRGB, busy);
    const std::string tiled = folder.file("tiled.tif"), stripped = folder.file("stripped.tif");
    test::save_image(image, tiled, [](VipsImage* in, const char* to) {
        return vips_tiffsave(in, to, "tile", TRUE, "tile_width", 16, "tile_height", 16,
                             "compression", VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE, nullptr);
    });
    test::save_image(image, stripped, [](VipsImage* in, const char* to) {
        return vips_tiffsave(in, to, "compression", VIPS_FOREIGN_TIFF_COMPRESSION_LZW, nullptr);
    });
    // BigTIFF, under a name ending in brackets (which libvips would take for load options).
    const std::string big = folder.file("big.tif[1]");
    test::save_image(image, big, [](VipsImage* in, const char* to) {
        return vips_tiffsave(in, to, "bigtiff", TRUE, nullptr);
    });
    ASSERT_TRUE(std::filesystem::exists(big));
    for (const std::string& path : {tiled, stripped, big}) {
        const Read read = read_all(path);
        EXPECT_EQ(read.info.loader, "tiffload") << path;
        EXPECT_FALSE(read.info.has_alpha);
        EXPECT_TRUE(read.rgba == expected_rgba(image)) << path;
    }
}

TEST_F(VipsImageReaderTest, Tiff16BitRgbIsScaled) {
    SampleImage image{9, 7, 3, VIPS_FORMAT_USHORT, VIPS_INTERPRETATION_RGB16, {}};
    std::vector<std::uint8_t> expected;
    for (std::uint32_t i = 0; i < image.width * image.height * 3; ++i) {
        const auto v = std::uint16_t(test::pattern_word(i, 9));
        image.bytes.resize(image.bytes.size() + 2);
        std::memcpy(&image.bytes[image.bytes.size() - 2], &v, 2);
        expected.push_back(std::uint8_t(std::lround(v * 255.0 / 65535.0)));
        if (i % 3 == 2) expected.push_back(255);
    }
    const std::string path = folder.file("rgb16.tif");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_tiffsave(in, to, nullptr); });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.bits_per_sample, 16u);
    EXPECT_TRUE(read.rgba == expected);
}

// CMYK goes through libvips' colour management: white, black and cyan come out as such.
TEST_F(VipsImageReaderTest, CmykTiffBecomesSrgb) {
    if (!vips_icc_present()) GTEST_SKIP() << "this libvips has no colour management (lcms)";
    const std::uint8_t inks[3][4] = {{0, 0, 0, 0}, {0, 0, 0, 255}, {255, 0, 0, 0}};
    const SampleImage image =
        eight_bit(3, 2, 4, VIPS_INTERPRETATION_CMYK,
                  [&](std::uint32_t x, std::uint32_t, std::uint32_t b) { return inks[x][b]; });
    const std::string path = folder.file("cmyk.tif");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_tiffsave(in, to, nullptr); });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.bands, 4u);
    EXPECT_FALSE(read.info.has_alpha);  // the fourth band is black ink, not alpha
    const std::uint8_t* white = &read.rgba[0];
    const std::uint8_t* black = &read.rgba[4];
    const std::uint8_t* cyan = &read.rgba[8];
    for (int c = 0; c < 3; ++c) {
        EXPECT_GE(white[c], 200) << c;
        EXPECT_LE(black[c], 60) << c;
    }
    EXPECT_LT(cyan[0] + 80, cyan[1]);
    EXPECT_LT(cyan[0] + 80, cyan[2]);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(read.rgba[i * 4 + 3], 255);
}

TEST_F(VipsImageReaderTest, WebpLosslessIsExact) {
    if (!test::has_vips_operation("webpsave")) GTEST_SKIP() << "this libvips writes no WebP";
    // Alpha of 1 or more: lossless WebP may change the colour of fully transparent texels.
    const SampleImage image = eight_bit(
        21, 13, 4, VIPS_INTERPRETATION_sRGB, [](std::uint32_t x, std::uint32_t y, std::uint32_t b) {
            return b == 3 ? std::uint8_t(1 + busy(x, y, b) % 255) : busy(x, y, b);
        });
    const std::string path = folder.file("lossless.webp");
    test::save_image(image, path, [](VipsImage* in, const char* to) {
        return vips_webpsave(in, to, "lossless", TRUE, nullptr);
    });
    const Read read = read_all(path);
    EXPECT_EQ(read.info.loader, "webpload");
    EXPECT_TRUE(read.info.has_alpha);
    EXPECT_TRUE(read.rgba == expected_rgba(image));
}

// libvips starts once, whichever thread comes first; readers on several threads each get their
// own rows.
TEST_F(VipsImageReaderTest, ReadersOnSeveralThreads) {
    const SampleImage image = eight_bit(64, 48, 4, VIPS_INTERPRETATION_sRGB, busy);
    const std::string path = folder.file("shared.png");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    const std::vector<std::uint8_t> expected = expected_rgba(image);
    std::atomic<int> matches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 10; ++i) matches += read_all(path).rgba == expected;
        });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(matches.load(), 40);
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::vector<std::uint8_t> file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The error of opening and reading the whole file; its message must carry libvips' reason, and
// libvips' error buffer must be empty afterwards.
Errc read_error(const std::string& path) {
    try {
        read_all(path);
    } catch (const Error& error) {
        EXPECT_FALSE(error.detail().empty());
        EXPECT_STREQ(vips_error_buffer(), "") << "libvips' error buffer was left full";
        return error.code();
    }
    ADD_FAILURE() << path << ": no error";
    return Errc::backend_failure;
}

TEST_F(VipsImageReaderTest, GarbageAndEmptyFilesAreCorrupt) {
    std::vector<std::uint8_t> garbage(4096);
    for (std::size_t i = 0; i < garbage.size(); ++i) {
        garbage[i] = std::uint8_t(test::pattern_word(i, 1));
    }
    write_bytes(folder.file("garbage.png"), garbage);
    write_bytes(folder.file("empty.png"), {});
    EXPECT_EQ(read_error(folder.file("garbage.png")), Errc::corrupt_data);
    EXPECT_EQ(read_error(folder.file("empty.png")), Errc::corrupt_data);
}

// Noise does not compress, so half the file is half the rows: the header opens, the rows fail.
TEST_F(VipsImageReaderTest, TruncatedPngAndJpegAreCorrupt) {
    const SampleImage noise = eight_bit(256, 256, 3, VIPS_INTERPRETATION_sRGB, busy);
    const std::string png = folder.file("noise.png"), jpeg = folder.file("noise.jpg");
    test::save_image(noise, png,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    test::save_image(noise, jpeg, [](VipsImage* in, const char* to) {
        return vips_jpegsave(in, to, "Q", 90, nullptr);
    });
    for (const std::string& path : {png, jpeg}) {
        std::vector<std::uint8_t> bytes = file_bytes(path);
        ASSERT_GT(bytes.size(), 20000u);
        bytes.resize(bytes.size() / 2);
        write_bytes(path, bytes);
        EXPECT_NO_THROW(VipsImageReader{path}) << path << ": the header is whole";
        EXPECT_EQ(read_error(path), Errc::corrupt_data) << path;
    }
}

TEST_F(VipsImageReaderTest, MissingFileAndFolderAreIoErrors) {
    EXPECT_EQ(read_error(folder.file("missing.png")), Errc::io_error);
    EXPECT_EQ(read_error(folder.path().string()), Errc::io_error);
}

// libvips would wait for a writer; the reader refuses the FIFO first. Should it block, the test
// opens the writing end itself, so that it fails instead of hanging.
TEST_F(VipsImageReaderTest, FifoIsRefusedWithoutBlocking) {
    const std::string path = folder.file("pipe.png");
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    auto result = std::async(std::launch::async, [&] { return read_error(path); });
    if (result.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
        ADD_FAILURE() << "reading a FIFO blocked";
        std::ofstream unblock(path, std::ios::binary);
    }
    EXPECT_EQ(result.get(), Errc::io_error);
}

TEST_F(VipsImageReaderTest, SidesAbove2To20AreRefusedFromTheHeader) {
    bake::initialise_vips();
    for (const auto& [width, height] : {std::pair{(1 << 20) + 1, 1}, std::pair{1, (1 << 20) + 1}}) {
        VipsImage* black = nullptr;
        ASSERT_EQ(vips_black(&black, width, height, nullptr), 0);
        const std::string path = folder.file("huge.tif");
        ASSERT_EQ(vips_tiffsave(black, path.c_str(), "compression",
                                VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE, nullptr),
                  0);
        g_object_unref(black);
        EXPECT_ERRC(VipsImageReader{path}, Errc::invalid_argument);
    }
}

TEST_F(VipsImageReaderTest, ReadRowsRefusesWrongCounts) {
    const SampleImage image = eight_bit(4, 3, 3, VIPS_INTERPRETATION_sRGB, busy);
    const std::string path = folder.file("small.png");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    VipsImageReader reader(path);
    std::vector<std::uint8_t> rows(4 * 4 * 4);
    EXPECT_ERRC(reader.read_rows(4, rows), Errc::invalid_argument);
    EXPECT_ERRC(reader.read_rows(2, std::span(rows).first(31)), Errc::invalid_argument);
    reader.read_rows(3, std::span(rows).first(48));
    EXPECT_ERRC(reader.read_rows(1, std::span(rows).first(16)), Errc::invalid_argument);
}

// How many times this process has the file open: its descriptors that name it, those that share
// one open file (dup, as libvips' source does with the reader's) counted once (kcmp); -1 where
// kcmp is not allowed.
int times_open(const std::string& path) {
    std::vector<int> fds;
    const auto target = std::filesystem::canonical(path);
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code error;
        const auto named = std::filesystem::read_symlink(entry.path(), error);
        if (!error && named == target) fds.push_back(std::stoi(entry.path().filename()));
    }
    int distinct = 0;
    for (std::size_t i = 0; i < fds.size(); ++i) {
        bool seen = false;
        for (std::size_t j = 0; j < i && !seen; ++j) {
            const long same =
                ::syscall(SYS_kcmp, ::getpid(), ::getpid(), KCMP_FILE, fds[i], fds[j]);
            if (same < 0) return -1;
            seen = same == 0;
        }
        if (!seen) ++distinct;
    }
    return distinct;
}

// The image is opened once and libvips reads that descriptor: a name swapped after the check
// cannot hand libvips another file (a FIFO that blocks it, a device). Renaming another image over
// the name after opening changes nothing the reader gives.
TEST_F(VipsImageReaderTest, TheFileIsOpenedOnceAndReadThroughThatDescriptor) {
    const SampleImage image = eight_bit(37, 23, 4, VIPS_INTERPRETATION_sRGB, busy);
    const SampleImage other = eight_bit(37, 23, 4, VIPS_INTERPRETATION_sRGB, smooth);
    const std::string path = folder.file("once.png"), swap = folder.file("swap.png");
    const auto png = [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); };
    test::save_image(image, path, png);
    test::save_image(other, swap, png);
    VipsImageReader reader(path);
    const int opened = times_open(path);
    if (opened < 0) GTEST_SKIP() << "kcmp is not allowed here: " << std::strerror(errno);
    EXPECT_EQ(opened, 1) << "the image is open more than once";
    std::filesystem::rename(swap, path);
    std::vector<std::uint8_t> rgba(std::size_t(37) * 23 * 4);
    reader.read_rows(23, rgba);
    EXPECT_EQ(rgba, expected_rgba(image));
}

// The same bytes from memory (the fuzz target's way in) read as from the file.
TEST_F(VipsImageReaderTest, AnImageInMemoryReadsAsTheFile) {
    const SampleImage image = eight_bit(19, 7, 3, VIPS_INTERPRETATION_sRGB, busy);
    const std::string path = folder.file("memory.png");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); });
    const std::vector<std::uint8_t> bytes = file_bytes(path);
    VipsImageReader reader{std::span<const std::uint8_t>(bytes)};
    EXPECT_EQ(reader.info().loader, "pngload");
    std::vector<std::uint8_t> rgba(std::size_t(19) * 7 * 4);
    reader.read_rows(7, rgba);
    EXPECT_EQ(rgba, read_all(path).rgba);
    const std::vector<std::uint8_t> garbage(100, 0x42);
    EXPECT_ERRC(VipsImageReader{std::span<const std::uint8_t>(garbage)}, Errc::corrupt_data);
}

// The loaders libvips marks untrusted are blocked unless allowed: a PPM is refused (corrupt_data,
// naming the flag that allows it), then read once allowed.
TEST_F(VipsImageReaderTest, UntrustedLoadersAreBlockedUntilAllowed) {
    const SampleImage image = eight_bit(5, 4, 3, VIPS_INTERPRETATION_sRGB, busy);
    const std::string path = folder.file("image.ppm");
    test::save_image(image, path,
                     [](VipsImage* in, const char* to) { return vips_ppmsave(in, to, nullptr); });
    try {
        VipsImageReader reader(path);
        ADD_FAILURE() << "a PPM was read with the untrusted loaders blocked";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
        EXPECT_NE(std::string(error.what()).find("--allow-untrusted-loaders"), std::string::npos)
            << error.what();
    }
    allow_untrusted_loaders(true);
    EXPECT_EQ(read_all(path).rgba, expected_rgba(image));
    allow_untrusted_loaders(false);
    EXPECT_ERRC(VipsImageReader{path}, Errc::corrupt_data);
}

// What a loader decodes whole is told from the header: a progressive JPEG's coefficients (2 bytes
// a sample), an interlaced PNG's image, a GIF's frame and the one before it; the loaders that
// stream (a baseline JPEG, a plain PNG, a TIFF) take nothing beyond the rows asked for.
TEST_F(VipsImageReaderTest, WholeFrameDecodesAreToldFromTheHeader) {
    const SampleImage image = eight_bit(40, 30, 3, VIPS_INTERPRETATION_sRGB, smooth);
    struct Case {
        const char* name;
        test::Saver saver;
        std::uint64_t decode_bytes;
    };
    const std::vector<Case> cases = {
        {"baseline.jpg",
         [](VipsImage* in, const char* to) { return vips_jpegsave(in, to, nullptr); }, 0},
        {"progressive.jpg",
         [](VipsImage* in, const char* to) {
             return vips_jpegsave(in, to, "interlace", TRUE, nullptr);
         },
         40 * 30 * 3 * 2},
        {"plain.png", [](VipsImage* in, const char* to) { return vips_pngsave(in, to, nullptr); },
         0},
        {"interlaced.png",
         [](VipsImage* in, const char* to) {
             return vips_pngsave(in, to, "interlace", TRUE, nullptr);
         },
         40 * 30 * 3},
        {"stripped.tif",
         [](VipsImage* in, const char* to) { return vips_tiffsave(in, to, nullptr); }, 0},
        {"frame.gif", [](VipsImage* in, const char* to) { return vips_gifsave(in, to, nullptr); },
         40 * 30 * 4 * 2},
    };
    for (const Case& c : cases) {
        if (std::string(c.name) == "frame.gif" && !test::has_vips_operation("gifsave")) continue;
        const std::string path = folder.file(c.name);
        test::save_image(image, path, c.saver);
        EXPECT_EQ(VipsImageReader(path).info().decode_bytes, c.decode_bytes) << c.name;
    }
}

}  // namespace
}  // namespace vtpage::bake
