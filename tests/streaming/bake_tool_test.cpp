// vtpage-bake as a user runs it: bake (version 4), check (versions 1 and 4), and the exit status
// and message for bad input. The inputs are PNGs written with stb_image_write; the other image
// formats and the tile formats are tested in tests/bake.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "../support/bake_tool_run.hpp"
#include "../support/wait_for_exit.hpp"
#include "streaming_test_support.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#pragma GCC diagnostic pop

namespace vtpage::vt {
namespace {

using test::ToolRun;
std::filesystem::path tool_path() { return test::bake_tool_path(); }
ToolRun run(const std::string& arguments) { return test::run_bake_tool(arguments); }

class BakeToolTest : public testing::Test {
protected:
    void SetUp() override {
        if (!std::filesystem::exists(tool_path())) {
            GTEST_FAIL() << "vtpage-bake not found at " << tool_path() << " (build it first)";
        }
        const RgbaImage image = test::make_test_image(300, 260, 7);
        png_ = folder_.file("image.png");
        ASSERT_TRUE(stbi_write_png(png_.c_str(), int(image.width), int(image.height), 4,
                                   image.texels.data(), int(image.width) * 4));
        image_ = image;
    }
    test::TemporaryFolder folder_;
    std::string png_;
    RgbaImage image_;
};

TEST_F(BakeToolTest, BakesAndChecks) {
    const std::string out = folder_.file("image.vtex");
    const ToolRun bake = run("-q --format rgba8 " + png_ + " -o " + out);
    ASSERT_EQ(bake.status, 0) << bake.output;
    EXPECT_NE(bake.output.find(out + ": 300 x 260, rgba8, 9 mips, 3 pages"), std::string::npos)
        << bake.output;
    EXPECT_NE(bake.output.find("mip  0      300 x 260      exact"), std::string::npos)
        << bake.output;
    const ToolRun check = run("-q --check " + out);
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_NE(check.output.find("ok: version 4, 300 x 260, rgba8, 3 pages"), std::string::npos)
        << check.output;
    // Mip 0's payload is the image itself, unpadded.
    const BakedFileSource source(out);
    ASSERT_EQ(source.shape(), (TextureShape{300, 260, TileFormat::rgba8}));
    const TextureLayout layout(source.shape());
    std::vector<std::byte> page(page_bytes);
    source.fill_host(0, page);
    for (std::uint32_t y = 0; y < 260; ++y) {
        for (std::uint32_t x = 0; x < 300; ++x) {
            const TileLocation where = layout.locate(0, x / tile_payload, y / tile_payload);
            ASSERT_EQ(where.page, 0u);
            const std::byte* texel =
                page.data() + where.byte_offset() +
                texel_offset(x % tile_payload + tile_border, y % tile_payload + tile_border);
            ASSERT_EQ(std::memcmp(texel, &image_.texels[(std::size_t(y) * 300 + x) * 4], 4), 0)
                << x << "," << y;
        }
    }
}

// Version 1 files, which the library still writes, are still checked.
TEST_F(BakeToolTest, CorruptOrTruncatedVersionOneFilesExitTwoNamingTheProblem) {
    const std::string out = folder_.file("image.vtex");
    bake_texture(image_, out);
    EXPECT_EQ(run("-q --check " + out).status, 0);
    const BakedHeader header = BakedTextureFile(out).header();

    const std::string damaged = folder_.file("damaged.vtex");
    std::filesystem::copy_file(out, damaged);
    {
        FILE* file = std::fopen(damaged.c_str(), "r+b");
        ASSERT_TRUE(file);
        std::fseek(file, long(header.data_offset + 2 * page_bytes + 100), SEEK_SET);
        std::fputc(0x42, file);
        std::fclose(file);
    }
    ToolRun check = run("-q --check " + damaged);
    EXPECT_EQ(check.status, 2) << check.output;
    EXPECT_NE(check.output.find("tile checksum mismatch: page 2"), std::string::npos)
        << check.output;
    // The same message as the library's error.
    try {
        BakedTextureFile(damaged).check_all();
        ADD_FAILURE() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(check.output.find(error.detail()), std::string::npos) << check.output;
    }

    const std::string truncated = folder_.file("truncated.vtex");
    std::filesystem::copy_file(out, truncated);
    std::filesystem::resize_file(truncated, header.file_bytes / 2);
    check = run("-q --check " + truncated);
    EXPECT_EQ(check.status, 2) << check.output;
    EXPECT_NE(check.output.find("truncated"), std::string::npos) << check.output;

    check = run("-q --check " + folder_.file("missing.vtex"));
    EXPECT_EQ(check.status, 2) << check.output;
    EXPECT_NE(check.output.find("cannot open"), std::string::npos) << check.output;

    check = run("-q --check " + png_);
    EXPECT_EQ(check.status, 2) << check.output;
    EXPECT_NE(check.output.find("bad magic: not a vtpage baked texture"), std::string::npos)
        << check.output;
}

TEST_F(BakeToolTest, BadFlagsAndInputsExitTwo) {
    EXPECT_EQ(run("--no-such-flag").status, 2);
    EXPECT_EQ(run("").status, 2);
    EXPECT_EQ(run(png_).status, 2);  // no -o
    const std::string not_an_image = folder_.file("text.png");
    {
        std::FILE* f = std::fopen(not_an_image.c_str(), "w");
        std::fputs("hello", f);
        std::fclose(f);
    }
    const ToolRun bad = run("-q " + not_an_image + " -o " + folder_.file("x.vtex"));
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.output.find("cannot load the image"), std::string::npos) << bad.output;
    EXPECT_EQ(run("--help").status, 0);
    EXPECT_EQ(run("-q --format bc9 " + png_ + " -o " + folder_.file("x.vtex")).status, 2);
    // Nothing is padded any more: the padding limit is gone.
    EXPECT_EQ(run("-q --max-padding 4 " + png_ + " -o " + folder_.file("x.vtex")).status, 2);
}

TEST_F(BakeToolTest, InputProblemsNameTheInputAndExitTwo) {
    const std::string out = folder_.file("out.vtex");
    const std::string not_an_image = folder_.file("text.png");
    {
        std::FILE* f = std::fopen(not_an_image.c_str(), "w");
        std::fputs("hello", f);
        std::fclose(f);
    }
    ToolRun bad = run("-q " + not_an_image + " -o " + out);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("vtpage-bake: " + not_an_image + ": "), std::string::npos)
        << bad.output;
    EXPECT_EQ(bad.output.find(out), std::string::npos) << "names the output: " << bad.output;

    // An output size cap: refused from the image's header, before decoding.
    bad = run("-q --max-output-gib 0.001 " + png_ + " -o " + out);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find(png_ + ": invalid_argument: the baked file of a 300 x 260 image"),
              std::string::npos)
        << bad.output;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_EQ(run("-q --max-output-gib nan " + png_ + " -o " + out).status, 2);
    EXPECT_EQ(run("-q --max-output-gib -1 " + png_ + " -o " + out).status, 2);
}

// Nothing is padded: a thin strip is a thin texture, a few pages of one tile column each.
TEST_F(BakeToolTest, ThinStripsBakeSmall) {
    for (const int height : {16384, 65536}) {
        const std::string strip = folder_.file("strip.png");
        const std::vector<std::uint8_t> texels(std::size_t(height) * 4, 200);
        ASSERT_TRUE(stbi_write_png(strip.c_str(), 1, height, 4, texels.data(), 4));
        const std::string out = folder_.file("strip.vtex");
        const ToolRun bake = run("-q " + strip + " -o " + out);
        ASSERT_EQ(bake.status, 0) << bake.output;
        EXPECT_NE(bake.output.find(out + ": 1 x " + std::to_string(height)), std::string::npos)
            << bake.output;
        EXPECT_LT(std::filesystem::file_size(out), 4u << 20);
        EXPECT_EQ(run("-q --check " + out).status, 0);
        std::filesystem::remove(out);
    }
}

// Found by the image fuzz target: a JPEG Huffman table declaring more than 256 codes made
// stb_image write past its table. libvips refuses it too: bad input, naming the image.
TEST_F(BakeToolTest, AJpegHuffmanTableOfMoreThan256CodesIsRefused) {
    const std::string jpeg = folder_.file("bad.jpg");
    ASSERT_TRUE(stbi_write_jpg(jpeg.c_str(), int(image_.width), int(image_.height), 4,
                               image_.texels.data(), 80));
    std::vector<char> bytes;
    {
        std::ifstream in(jpeg, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::size_t dht = 0;
    while (dht + 21 < bytes.size() && !(bytes[dht] == '\xff' && bytes[dht + 1] == '\xc4')) ++dht;
    ASSERT_LT(dht + 21, bytes.size()) << "no DHT segment";
    bytes[dht + 5 + 14] = char(200);  // codes of length 15 and 16: far more than 256 in all
    bytes[dht + 5 + 15] = char(200);
    { std::ofstream(jpeg, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size())); }
    const ToolRun bad = run("-q " + jpeg + " -o " + folder_.file("bad.vtex"));
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("vtpage-bake: " + jpeg + ": "), std::string::npos) << bad.output;
}

// Found by the image fuzz target: a PNG chunk declaring 2 GiB made stb_image allocate that
// much before reading it. libvips refuses it too: bad input, naming the image.
TEST_F(BakeToolTest, APngChunkLongerThanTheFileIsRefused) {
    std::vector<char> bytes;
    {
        std::ifstream in(png_, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::size_t idat = 8;
    while (idat + 8 < bytes.size() && std::string(&bytes[idat + 4], 4) != "IDAT") {
        const auto length = std::uint32_t(std::uint8_t(bytes[idat])) << 24 |
                            std::uint32_t(std::uint8_t(bytes[idat + 1])) << 16 |
                            std::uint32_t(std::uint8_t(bytes[idat + 2])) << 8 |
                            std::uint8_t(bytes[idat + 3]);
        idat += length + 12;
    }
    ASSERT_LT(idat + 8, bytes.size()) << "no IDAT chunk";
    bytes[idat] = char(0x7f);  // about 2 GiB
    const std::string png = folder_.file("bad.png");
    { std::ofstream(png, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size())); }
    const ToolRun bad = run("-q " + png + " -o " + folder_.file("bad.vtex"));
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("vtpage-bake: " + png + ": "), std::string::npos) << bad.output;
    EXPECT_FALSE(std::filesystem::exists(folder_.file("bad.vtex")));
}

// The loaders libvips marks untrusted (PPM/PGM among them) are blocked unless
// --allow-untrusted-loaders allows them: a well-formed 2 x 2 PGM is refused by default with the
// flag named, and bakes with it (one grey channel, so bc4); a binary PPM whose header is a long run
// of digits is bad input either way, and leaves no file behind.
TEST_F(BakeToolTest, UntrustedLoadersAreBlockedUnlessAllowed) {
    const std::string pgm = folder_.file("grey.pgm");
    { std::ofstream(pgm, std::ios::binary) << std::string("P5 2 2 255\n\x10\x20\x30\x40"); }
    const ToolRun blocked = run("-q " + pgm + " -o " + folder_.file("grey.vtex"));
    EXPECT_EQ(blocked.status, 2) << blocked.output;
    EXPECT_NE(blocked.output.find("--allow-untrusted-loaders"), std::string::npos)
        << blocked.output;
    EXPECT_FALSE(std::filesystem::exists(folder_.file("grey.vtex")));
    const ToolRun good =
        run("-q --allow-untrusted-loaders " + pgm + " -o " + folder_.file("grey.vtex"));
    EXPECT_EQ(good.status, 0) << good.output;
    EXPECT_NE(good.output.find("format bc4 (auto: one grey channel)"), std::string::npos)
        << good.output;
    const std::string ppm = folder_.file("other.img");
    { std::ofstream(ppm, std::ios::binary) << std::string("P6") + std::string(200, '6'); }
    const ToolRun bad =
        run("-q --allow-untrusted-loaders " + ppm + " -o " + folder_.file("other.vtex"));
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("vtpage-bake: " + ppm + ": "), std::string::npos) << bad.output;
    EXPECT_FALSE(std::filesystem::exists(folder_.file("other.vtex")));
    EXPECT_FALSE(std::filesystem::exists(folder_.file("other.vtex.partial")));
}

// An output that is a FIFO (or a device: the rename would put the file over the node), the
// image itself (by another name: the same inode), or a folder is refused before any work, exit 2.
TEST_F(BakeToolTest, OutputsThatAreNotOursToReplaceAreRefusedBeforeWork) {
    const std::string fifo = folder_.file("out.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ToolRun bad = run("-q " + png_ + " -o " + fifo);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find(fifo + ": exists and is not a regular file"), std::string::npos)
        << bad.output;
    struct stat status {};
    ASSERT_EQ(::stat(fifo.c_str(), &status), 0);
    EXPECT_TRUE(S_ISFIFO(status.st_mode)) << "the FIFO was replaced";

    const std::string other_name = folder_.file("same.png");
    std::filesystem::create_hard_link(png_, other_name);
    const auto image_bytes = std::filesystem::file_size(png_);
    bad = run("-q " + png_ + " -o " + other_name);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("is the image being baked"), std::string::npos) << bad.output;
    EXPECT_EQ(std::filesystem::file_size(png_), image_bytes) << "the image was overwritten";

    const std::string folder = folder_.file("a-folder");
    std::filesystem::create_directory(folder);
    bad = run("-q " + png_ + " -o " + folder);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find(folder + ": is a folder"), std::string::npos) << bad.output;
    EXPECT_EQ(bad.output.find("mip"), std::string::npos) << "baked before refusing: " << bad.output;
}

// --threads and --zstd-level reach the bake; values out of range are bad flags.
TEST_F(BakeToolTest, ThreadsAndZstdLevelAreFlags) {
    const std::string out = folder_.file("flags.vtex");
    for (const char* level : {"9", "-3"}) {
        const ToolRun good =
            run(std::string("-q --threads 2 --zstd-level ") + level + " " + png_ + " -o " + out);
        EXPECT_EQ(good.status, 0) << good.output;
        EXPECT_EQ(run("-q --check " + out).status, 0);
    }
    for (const char* flags : {"--threads 0", "--threads 1025", "--zstd-level 0", "--zstd-level 20",
                              "--zstd-level -11", "--threads -1", "--max-memory-gib 0"}) {
        const ToolRun bad = run(std::string("-q ") + flags + " " + png_ + " -o " + out);
        EXPECT_EQ(bad.status, 2) << flags << ": " << bad.output;
    }
}

// The memory a bake needs is checked from the header against --max-memory-gib: a 300 x 260 PNG
// bakes in the default, and is refused (naming the flag, exit 2) under a limit below the bake's
// own needs.
TEST_F(BakeToolTest, TheMemoryCeilingIsCheckedFromTheHeader) {
    const std::string out = folder_.file("memory.vtex");
    const ToolRun bad = run("-q --max-memory-gib 0.25 " + png_ + " -o " + out);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("(--max-memory-gib)"), std::string::npos) << bad.output;
    EXPECT_FALSE(std::filesystem::exists(out));
}

// SIGINT and SIGTERM in the middle of a bake remove its partial file; the tool exits 1.
TEST_F(BakeToolTest, SignalsRemoveThePartialFile) {
    const RgbaImage big = test::make_test_image(1536, 1536, 3);
    const std::string input = folder_.file("big.png");
    ASSERT_TRUE(stbi_write_png(input.c_str(), int(big.width), int(big.height), 4, big.texels.data(),
                               int(big.width) * 4));
    for (const int signal : {SIGINT, SIGTERM}) {
        const std::string out = folder_.file("big.vtex");
        const std::string partial = out + ".partial";
        std::filesystem::remove(partial);  // a failed first round must not start the second early
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            ::execl(tool_path().c_str(), "vtpage-bake", "-q", "--quality", "good", input.c_str(),
                    "-o", out.c_str(), nullptr);
            ::_exit(127);
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!std::filesystem::exists(partial) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (!std::filesystem::exists(partial)) {
            test::kill_and_reap(pid);
            FAIL() << "the bake never began writing";
        }
        ::kill(pid, signal);
        const std::optional<int> status = test::wait_for_exit(pid, std::chrono::seconds(60));
        ASSERT_TRUE(status) << "signal " << signal << ": still running 60 s later (killed)";
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1)
            << "signal " << signal << ": status " << *status;
        EXPECT_FALSE(std::filesystem::exists(partial)) << "signal " << signal;
        EXPECT_FALSE(std::filesystem::exists(out)) << "signal " << signal;
    }
}

TEST_F(BakeToolTest, FifosAreRefusedNotWaitedOn) {
    const std::string fifo = folder_.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ToolRun bad = run("-q " + fifo + " -o " + folder_.file("x.vtex"));
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("not a regular file"), std::string::npos) << bad.output;
    bad = run("-q --check " + fifo);
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("not a regular file"), std::string::npos) << bad.output;
}

TEST_F(BakeToolTest, APlantedLinkAtTheTemporaryFileIsNotWrittenThrough) {
    const std::string out = folder_.file("out.vtex");
    const std::string victim = folder_.file("victim");
    {
        std::FILE* f = std::fopen(victim.c_str(), "w");
        std::fputs("precious", f);
        std::fclose(f);
    }
    std::filesystem::create_symlink(victim, out + ".partial");
    const ToolRun bad = run("-q " + png_ + " -o " + out);
    EXPECT_EQ(bad.status, 1) << bad.output;
    EXPECT_NE(bad.output.find("refusing to write through it"), std::string::npos) << bad.output;
    EXPECT_EQ(std::filesystem::file_size(victim), 8u);
    EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace vtpage::vt
