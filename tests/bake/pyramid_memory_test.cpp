// Reading an image through VipsImageReader into MipPyramidBuilder takes memory that grows with
// the image's width, not its height. Each image is read in a fresh process of this binary, whose
// peak resident size (ru_maxrss) is then its own.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "../support/child_process.hpp"
#include "../support/temporary_folder.hpp"
#include "mip_pyramid_builder.hpp"
#include "vips_image_reader.hpp"
#include "vips_test_images.hpp"

#include "under_sanitizer.hpp"

namespace vtpage::bake {
namespace {

constexpr std::uint32_t payload = 120, border = 4, rows_a_read = 64;

// Child: bakes the file into a sink that only counts, and prints what it measured.
int bake_and_measure(const std::vector<std::string>& arguments) try {
    VipsImageReader reader(arguments.at(0));
    const std::uint32_t width = reader.info().width, height = reader.info().height;
    std::uint64_t bands = 0;
    MipPyramidBuilder builder(width, height, payload, border, [&](const MipBand&) { ++bands; });
    std::vector<std::uint8_t> rows(std::size_t(rows_a_read) * width * 4);
    const auto start = std::chrono::steady_clock::now();
    for (std::uint32_t y = 0; y < height; y += rows_a_read) {
        const std::uint32_t count = std::min(rows_a_read, height - y);
        const auto piece = std::span(rows).first(std::size_t(count) * width * 4);
        reader.read_rows(count, piece);
        builder.add_rows(count, piece);
    }
    builder.finish();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("peak_kib %ld seconds %.3f bands %llu buffers %llu\n", usage.ru_maxrss, seconds,
                static_cast<unsigned long long>(bands),
                static_cast<unsigned long long>(builder.buffer_bytes_peak()));
    return 0;
} catch (const std::exception& error) {
    std::printf("failed: %s\n", error.what());
    return 1;
}
VTPAGE_CHILD_MODE("bake-and-measure", bake_and_measure);

struct Measured {
    long peak_kib = 0;
    double seconds = 0;
    std::uint64_t bands = 0;
    std::uint64_t buffers = 0;
};

Measured measure(const std::string& path) {
    const test::ChildResult child = test::run_child("bake-and-measure", {path}, -1, 120);
    EXPECT_EQ(child.exit_code, 0) << child.output;
    Measured measured;
    const std::size_t report = child.output.find("peak_kib");
    if (report == std::string::npos) {
        ADD_FAILURE() << "the child printed no measurement: " << child.output;
        return measured;
    }
    std::istringstream words(child.output.substr(report));
    std::string name;
    words >> name >> measured.peak_kib >> name >> measured.seconds >> name >> measured.bands >>
        name >> measured.buffers;
    return measured;
}

// Bands of every level of Vulkan's chain: one per row of tiles.
std::uint64_t expected_bands(std::uint32_t width, std::uint32_t height) {
    std::uint64_t bands = 0;
    for (;; width = std::max(1u, width / 2), height = std::max(1u, height / 2)) {
        bands += (height + payload - 1) / payload;
        if (width == 1 && height == 1) return bands;
    }
}

TEST(PyramidMemory, FollowsTheWidthNotTheHeight) {
#if defined(VTPAGE_UNDER_SANITIZER)
    GTEST_SKIP() << "a sanitizer's shadow memory and quarantine swamp the peaks measured here";
#endif
    struct Case {
        std::uint32_t width, height;
        Measured measured;
    };
    Case cases[] = {{4096, 4096, {}}, {4096, 16384, {}}, {16384, 4096, {}}};
    test::TemporaryFolder folder;
    double texels = 0, seconds = 0;
    for (Case& c : cases) {
        const std::string path = folder.file("pattern.tif");
        test::save_pattern_tiff(path, c.width, c.height);
        c.measured = measure(path);
        EXPECT_EQ(c.measured.bands, expected_bands(c.width, c.height));
        texels += double(c.width) * c.height;
        seconds += c.measured.seconds;
        std::printf("%u x %u: peak %.1f MiB (row buffers %.1f MiB), %.2f s\n", c.width, c.height,
                    c.measured.peak_kib / 1024.0, c.measured.buffers / 1048576.0,
                    c.measured.seconds);
    }
    std::printf("%.1f megatexels per second\n", texels / 1e6 / seconds);
    const long square = cases[0].measured.peak_kib, tall = cases[1].measured.peak_kib,
               wide = cases[2].measured.peak_kib;
    EXPECT_LE(tall, square + square / 4 + 16 * 1024) << "four times the height took more memory";
    EXPECT_GT(wide, square) << "four times the width took no more memory";
}

}  // namespace
}  // namespace vtpage::bake
