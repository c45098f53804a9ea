// vtpage-bake as a user runs it on version 4: every kind of input libvips reads, the formats
// `auto` chooses, corrupt files (exit 2, naming the page or field) and the memory of a bake at
// two widths.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/temporary_folder.hpp"
#include "bake_archive_test_support.hpp"
#include "block_codec.hpp"
#include "vips_under_thread_sanitizer.hpp"
#include "vtpage/streaming/archive/format_checksum.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"

#include "under_sanitizer.hpp"

namespace vtpage::bake {
namespace {

using test::run_bake_tool;
using test::ToolRun;

class BakeArchiveToolTest : public testing::Test {
protected:
    void SetUp() override {
        VTPAGE_SKIP_LIBVIPS_UNDER_THREAD_SANITIZER();
        if (!std::filesystem::exists(test::bake_tool_path())) {
            GTEST_FAIL() << "vtpage-bake not found at " << test::bake_tool_path();
        }
    }
    // Bakes `input` with the flags; expects exit 0 and a file that checks and opens as v3.
    ToolRun bake_ok(const std::string& input, const std::string& flags, const std::string& out) {
        ToolRun run = run_bake_tool("-q " + flags + " " + input + " -o " + out);
        EXPECT_EQ(run.status, 0) << run.output;
        const ToolRun check = run_bake_tool("-q --check " + out);
        EXPECT_EQ(check.status, 0) << check.output;
        EXPECT_NE(check.output.find("ok: version 4"), std::string::npos) << check.output;
        return run;
    }
    test::TemporaryFolder folder_;
};

// What the tool says it chose, and the format the file holds.
void expect_format(const ToolRun& run, const std::string& path, vt::TileFormat format,
                   const std::string& reason) {
    const std::string said =
        std::string("format ") + vt::tile_format_name(format) + " (" + reason + ")";
    EXPECT_NE(run.output.find(said), std::string::npos) << run.output;
    EXPECT_EQ(vt::BakedFileSource(path).shape().format, format);
}

TEST_F(BakeArchiveToolTest, PngJpegSixteenBitPngAndTiffBake) {
    const test::SampleImage rgb = test::photo_like(300, 260, 3, 1);
    const std::string png = folder_.file("in.png"), jpeg = folder_.file("in.jpg"),
                      tiff = folder_.file("in.tif"), png16 = folder_.file("in16.png");
    test::save_image(rgb, png, test::save_png);
    test::save_image(rgb, jpeg, [](VipsImage* in, const char* to) {
        return vips_jpegsave(in, to, "Q", 90, nullptr);
    });
    test::save_image(rgb, tiff, [](VipsImage* in, const char* to) {
        return vips_tiffsave(in, to, "tile", TRUE, nullptr);
    });
    test::save_image(test::photo_like(300, 260, 3, 1, true), png16, test::save_png);
    for (const std::string& input : {png, jpeg, tiff, png16}) {
        const std::string out = input + ".vtex";
        const ToolRun run = bake_ok(input, "", out);
        const vt::BakedFileSource source(out);
        EXPECT_EQ(source.shape(), (vt::TextureShape{300, 260, vt::TileFormat::bc1})) << input;
        EXPECT_EQ(source.version(), 4);
        EXPECT_NE(run.output.find("mip  0      300 x 260      PSNR "), std::string::npos)
            << run.output;
        EXPECT_NE(run.output.find("mip  8        1 x 1 "), std::string::npos) << run.output;
        EXPECT_NE(run.output.find(out + ": 300 x 260, bc1, 9 mips, 2 pages, "), std::string::npos)
            << run.output;
        EXPECT_NE(run.output.find("megatexels/s, peak memory "), std::string::npos) << run.output;
        const vt::BakedTextureArchive file(out);
        EXPECT_EQ(file.descriptor().source_bits, input == png16 ? 16u : 8u) << input;
    }
}

// A 16-bit sample v becomes round(v * 255 / 65535), exactly, in an rgba8 bake.
TEST_F(BakeArchiveToolTest, SixteenBitSamplesAreScaledExactly) {
    const test::SampleImage image = test::photo_like(50, 40, 3, 2, true);
    const std::string png16 = folder_.file("in16.png"), out = folder_.file("out.vtex");
    test::save_image(image, png16, test::save_png);
    const ToolRun run = bake_ok(png16, "--format rgba8", out);
    EXPECT_NE(run.output.find("mip  0       50 x 40       exact"), std::string::npos) << run.output;
    const vt::BakedFileSource source(out);
    std::vector<std::byte> page(vt::format_page_bytes);
    source.fill_host(0, page);  // the tail page: mip 0 is its tile 0
    for (std::uint32_t y = 0; y < 40; ++y) {
        for (std::uint32_t x = 0; x < 50; ++x) {
            for (std::uint32_t c = 0; c < 3; ++c) {
                const std::size_t at = ((std::size_t(y) * 50 + x) * 3 + c) * 2;
                const unsigned v = image.bytes[at] | image.bytes[at + 1] << 8;
                const auto texel = std::uint8_t(page[vt::texel_offset(x + 4, y + 4) + c]);
                ASSERT_EQ(texel, (v * 255 + 32767) / 65535) << x << "," << y << " channel " << c;
            }
        }
    }
}

TEST_F(BakeArchiveToolTest, AutoChoosesByAlphaAndChannels) {
    struct Case {
        std::uint32_t bands;
        vt::TileFormat format;
        const char* reason;
    };
    for (const Case& c : {Case{4, vt::TileFormat::bc3, "auto: the image has alpha"},
                          Case{2, vt::TileFormat::bc3, "auto: the image has alpha"},
                          Case{1, vt::TileFormat::bc4, "auto: one grey channel"},
                          Case{3, vt::TileFormat::bc1, "auto: colour without alpha"}}) {
        const std::string png = folder_.file("in" + std::to_string(c.bands) + ".png");
        test::save_image(test::photo_like(70, 90, c.bands, c.bands), png, test::save_png);
        const std::string out = png + ".vtex";
        expect_format(bake_ok(png, "--format auto", out), out, c.format, c.reason);
    }
    // Asked for, the format is used whatever the image holds.
    const std::string png = folder_.file("in4.png"), out = folder_.file("bc5.vtex");
    expect_format(bake_ok(png, "--format bc5 --quality fast", out), out, vt::TileFormat::bc5,
                  "as asked");
    EXPECT_EQ(run_bake_tool("-q --format bc7 " + png + " -o " + out).status, 2);
    EXPECT_EQ(run_bake_tool("-q --quality best " + png + " -o " + out).status, 2);
}

// The address modes and colour space given are recorded in the file (clamp to edge by default;
// sRGB by default for the formats that have it, linear for the others and with --linear); sRGB
// asked for a format without it is refused before anything is written.
TEST_F(BakeArchiveToolTest, AddressModesAndColourSpaceAreRecorded) {
    const std::string png = folder_.file("in.png");
    test::save_image(test::photo_like(70, 90, 3, 3), png, test::save_png);
    const std::string plain = folder_.file("plain.vtex"), marked = folder_.file("marked.vtex");
    const vt::TextureSampling srgb{vt::AddressMode::clamp_to_edge, vt::AddressMode::clamp_to_edge,
                                   vt::ColorSpace::srgb};
    for (const char* format : {"rgba8", "bc1", "bc3"}) {
        const ToolRun run = bake_ok(png, std::string("--format ") + format, plain);
        EXPECT_NE(run.output.find("address clamp_to_edge x clamp_to_edge, srgb"), std::string::npos)
            << run.output;
        EXPECT_EQ(vt::BakedFileSource(plain).sampling(), srgb) << format;
        bake_ok(png, std::string("--linear --format ") + format, plain);
        EXPECT_EQ(vt::BakedFileSource(plain).sampling(), vt::TextureSampling{}) << format;
    }
    for (const char* format : {"bc4", "bc5"}) {
        bake_ok(png, std::string("--format ") + format, plain);
        EXPECT_EQ(vt::BakedFileSource(plain).sampling(), vt::TextureSampling{}) << format;
    }
    const std::string grey = folder_.file("grey.png");
    test::save_image(test::photo_like(70, 90, 1, 3), grey, test::save_png);
    bake_ok(grey, "", plain);  // auto: bc4, which has no sRGB
    EXPECT_EQ(vt::BakedFileSource(plain).sampling(), vt::TextureSampling{});
    const ToolRun run =
        bake_ok(png, "--format bc1 --address-u repeat --address-v mirror --srgb", marked);
    EXPECT_NE(run.output.find("address repeat x mirrored_repeat, srgb"), std::string::npos)
        << run.output;
    const vt::TextureSampling sampling = vt::BakedFileSource(marked).sampling();
    EXPECT_EQ(sampling,
              (vt::TextureSampling{vt::AddressMode::repeat, vt::AddressMode::mirrored_repeat,
                                   vt::ColorSpace::srgb}));
    const ToolRun check = run_bake_tool("-q --check " + marked);
    EXPECT_NE(check.output.find("address repeat x mirrored_repeat, srgb"), std::string::npos)
        << check.output;
    const std::string refused = folder_.file("bc4.vtex");
    const ToolRun bc4 = run_bake_tool("-q --format bc4 --srgb " + png + " -o " + refused);
    EXPECT_EQ(bc4.status, 2) << bc4.output;
    EXPECT_NE(bc4.output.find("sRGB is only for rgba8, bc1 and bc3, and the format is bc4"),
              std::string::npos)
        << bc4.output;
    EXPECT_FALSE(std::filesystem::exists(refused));
    EXPECT_EQ(run_bake_tool("-q --srgb --linear " + png + " -o " + refused).status, 2);
    EXPECT_EQ(run_bake_tool("-q --address-u wrap " + png + " -o " + refused).status, 2);
}

// A write that fails midway (a full disk; a file size limit stands in for it, its signal
// ignored) while the workers add pages: exit 1 naming the output, and nothing left behind.
TEST_F(BakeArchiveToolTest, AFailedWriteLeavesNothing) {
    const std::string png = folder_.file("in.png"), out = folder_.file("out.vtex");
    test::save_image(test::photo_like(2000, 1500, 3, 9), png, test::save_png);
    const ToolRun run =
        run_bake_tool("-q --format rgba8 " + png + " -o " + out, "trap '' XFSZ; ulimit -f 2048; ");
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("vtpage-bake: " + out + ": io_error: "), std::string::npos)
        << run.output;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

// A file copied from the baked one with a change, and helpers to change it.
class CorruptArchiveTest : public BakeArchiveToolTest {
protected:
    void SetUp() override {
        BakeArchiveToolTest::SetUp();
        if (IsSkipped()) return;
        const std::string png = folder_.file("in.png");
        test::save_image(test::photo_like(600, 400, 3, 5), png, test::save_png);
        good_ = folder_.file("good.vtex");
        ASSERT_EQ(run_bake_tool("-q --format bc1 " + png + " -o " + good_).status, 0);
        std::ifstream in(good_, std::ios::binary);
        bytes_.assign(std::istreambuf_iterator<char>(in), {});
        std::memcpy(&header_, bytes_.data(), sizeof(header_));
        ASSERT_EQ(header_.page_count, 3u);
    }
    // Writes the bytes (with fresh descriptor, index and header checksums when asked) and
    // expects --check to exit 2 with `words` in its message.
    void expect_refused(std::vector<char> bytes, const std::string& words, bool fresh = false) {
        if (fresh) refresh_checksums(bytes);
        const std::string path = folder_.file("bad.vtex");
        {
            std::ofstream(path, std::ios::binary)
                .write(bytes.data(), std::streamsize(bytes.size()));
        }
        const ToolRun run = run_bake_tool("-q --check " + path);
        EXPECT_EQ(run.status, 2) << words << ": " << run.output;
        EXPECT_NE(run.output.find("vtpage-bake: " + path + ": "), std::string::npos) << run.output;
        EXPECT_NE(run.output.find(words), std::string::npos) << run.output;
    }
    void refresh_checksums(std::vector<char>& bytes) const {
        vt::PageArchiveHeader h;
        std::memcpy(&h, bytes.data(), sizeof(h));
        auto region = [&](std::uint64_t offset, std::uint64_t size) {
            return std::as_bytes(std::span(bytes.data() + offset, size));
        };
        const auto sum = [&](std::span<const std::byte> b) {
            return vt::archive_checksum(h.version, b);
        };
        h.descriptor_checksum = sum(region(h.descriptor_offset, h.descriptor_bytes));
        h.index_checksum = sum(region(h.index_offset, h.page_count * sizeof(vt::PageIndexEntry)));
        h.header_checksum = 0;
        h.header_checksum = sum(std::as_bytes(std::span(&h, 1)));
        std::memcpy(bytes.data(), &h, sizeof(h));
    }
    std::vector<char> with_descriptor_field(std::size_t offset, std::uint32_t value) const {
        std::vector<char> bytes = bytes_;
        std::memcpy(&bytes[header_.descriptor_offset + offset], &value, sizeof(value));
        return bytes;
    }
    std::string good_;
    std::vector<char> bytes_;
    vt::PageArchiveHeader header_;
};

TEST_F(CorruptArchiveTest, DescriptorFieldsRewrittenWithFreshChecksumsAreNamed) {
    using D = vt::BakedTextureDescriptor;
    expect_refused(with_descriptor_field(offsetof(D, format), 9), "bad descriptor: format is 9",
                   true);
    // bc3 has the same pages and mips here, but tiles of 64 KiB; rgba8 more pages.
    expect_refused(with_descriptor_field(offsetof(D, format), 2),
                   "bad descriptor: the archive's tile_bytes is 32768, expected 65536", true);
    expect_refused(with_descriptor_field(offsetof(D, format), 0),
                   "bad descriptor: page_count is 3, expected 4", true);
    expect_refused(with_descriptor_field(offsetof(D, source_width), 601),
                   "bad descriptor: source_width is 601, expected 600", true);
    expect_refused(with_descriptor_field(offsetof(D, source_bits), 12),
                   "bad descriptor: source_bits is 12", true);
    expect_refused(with_descriptor_field(offsetof(D, mip_count), 9),
                   "bad descriptor: mip_count is 9, expected 10", true);
    expect_refused(with_descriptor_field(offsetof(D, reserved0), 1),
                   "bad descriptor: reserved0 is 1, expected 0", true);
    expect_refused(with_descriptor_field(offsetof(D, page_count), 4),
                   "bad descriptor: page_count is 4, expected 3", true);
    expect_refused(with_descriptor_field(offsetof(D, width), 0),
                   "bad descriptor: width x height is 0 x 400", true);
    expect_refused(with_descriptor_field(offsetof(D, magic), 0), "bad descriptor: magic", true);
    expect_refused(with_descriptor_field(offsetof(D, reserved1), 1),
                   "bad descriptor: reserved1 is 1, expected 0", true);
    expect_refused(with_descriptor_field(offsetof(D, address_u), 3),
                   "bad descriptor: address_u, address_v are 3, 0", true);
    expect_refused(with_descriptor_field(offsetof(D, address_v), 7),
                   "bad descriptor: address_u, address_v are 0, 7", true);
    expect_refused(with_descriptor_field(offsetof(D, color_space), 2),
                   "bad descriptor: color_space is 2", true);
    // bc4 has bc1's tiles and pages: the same file said to be bc4 in sRGB.
    std::vector<char> bc4_srgb = with_descriptor_field(offsetof(D, format), 3);
    const std::uint32_t srgb = 1;
    std::memcpy(&bc4_srgb[header_.descriptor_offset + offsetof(D, color_space)], &srgb, 4);
    expect_refused(bc4_srgb,
                   "bad descriptor: color_space is srgb for bc4: sRGB is only for "
                   "rgba8, bc1 and bc3",
                   true);
    // Unchanged but for a stale checksum: the archive itself refuses it.
    std::vector<char> stale = with_descriptor_field(offsetof(D, source_bits), 16);
    expect_refused(stale, "descriptor checksum mismatch");
}

TEST_F(CorruptArchiveTest, HeaderIndexPayloadAndTruncationAreRefused) {
    std::vector<char> bytes = bytes_;
    bytes[20] ^= 1;  // page_count
    expect_refused(bytes, "header checksum mismatch");

    bytes = bytes_;
    bytes[header_.index_offset + 3] ^= 1;  // page 0's offset, 16 MiB on
    expect_refused(bytes, "page 0: bad index entry");
    bytes = bytes_;
    bytes[header_.index_offset + 16] ^= 1;  // page 0's stored checksum: the entry looks sound
    expect_refused(bytes, "index checksum mismatch");
    // Page 1's stored size, changed with a fresh checksum: its read names it.
    bytes = bytes_;
    bytes[header_.index_offset + sizeof(vt::PageIndexEntry) + 8] ^= 0x10;
    expect_refused(bytes, "page 1: ", true);

    vt::PageIndexEntry entry;
    std::memcpy(&entry, &bytes_[header_.index_offset + 2 * sizeof(entry)], sizeof(entry));
    bytes = bytes_;
    bytes[entry.offset + entry.stored_bytes / 2] ^= 0x40;
    expect_refused(bytes, "page 2");

    bytes.assign(bytes_.begin(), bytes_.end() - 4096);
    expect_refused(bytes, "truncated");

    // The library says the same: corrupt_data naming the page, as the streamer reports it.
    const std::string path = folder_.file("payload.vtex");
    bytes = bytes_;
    bytes[entry.offset + entry.stored_bytes / 2] ^= 0x40;
    { std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size())); }
    const vt::BakedFileSource source(path);
    std::vector<std::byte> page(vt::format_page_bytes);
    source.fill_host(0, page);
    try {
        source.fill_host(2, page);
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::corrupt_data);
        EXPECT_NE(error.detail().find("page 2"), std::string::npos) << error.what();
    }
}

long peak_kib_of(const ToolRun& run) {
    const std::size_t at = run.output.find("peak memory ");
    if (at == std::string::npos) return -1;
    return long(std::stod(run.output.substr(at + 12)) * 1024);
}

TEST_F(BakeArchiveToolTest, MemoryFollowsTheWidthNotTheImage) {
#if defined(VTPAGE_UNDER_SANITIZER)
    GTEST_SKIP() << "skipped under sanitizers: their shadow memory and quarantine swamp the "
                    "peaks measured here";
#endif
    const std::uint32_t height = 16384;
    struct Case {
        std::uint32_t width;
        const char* flags;
        long peak_kib = 0;
    };
    // Repeat along v holds band 0 of each level, and its page row, until the level's last row.
    Case cases[] = {{4096, ""}, {16384, ""}, {4096, "--address-v repeat"}};
    for (Case& c : cases) {
        const std::string tiff = folder_.file("wide.tif"), out = folder_.file("wide.vtex");
        test::save_pattern_tiff(tiff, c.width, height);
        const ToolRun run = run_bake_tool(std::string("-q --format bc1 --quality fast ") + c.flags +
                                          " " + tiff + " -o " + out);
        ASSERT_EQ(run.status, 0) << run.output;
        c.peak_kib = peak_kib_of(run);
        ASSERT_GT(c.peak_kib, 0) << run.output;
        const double in_core_mib = double(c.width) * height * 4 / 1048576;
        std::printf("%u x %u%s%s: peak %.1f MiB; in core its level 0 alone is %.0f MiB\n", c.width,
                    height, *c.flags ? ", " : "", c.flags, c.peak_kib / 1024.0, in_core_mib);
        EXPECT_LT(c.peak_kib / 1024.0, in_core_mib / 2) << run.output;
        std::filesystem::remove(tiff);
        std::filesystem::remove(out);
    }
    EXPECT_GT(cases[1].peak_kib, cases[0].peak_kib) << "four times the width took no more memory";
    EXPECT_LT(cases[2].peak_kib, cases[0].peak_kib + 48 * 1024)
        << "repeat along v held more than a page row and a band a level";
}

}  // namespace
}  // namespace vtpage::bake
