// Texture sets: the grid their planes lie in (every plane at its aspect, none overlapping, row
// by row), and how a folder or a manifest opens: its textures in order, and every kind of bad
// manifest refused with a message that says what is wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/wait_for_exit.hpp"
#include "scene_layout.hpp"
#include "texture_set_source.hpp"
#include "viewer_process.hpp"
#include "vtpage/streaming/archive/checksum64.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"

namespace vtpage::viewer {
namespace {

namespace fs = std::filesystem;

bool overlap(const PlanePlacement& a, const PlanePlacement& b) {
    return a.x < b.x + b.extent.x && b.x < a.x + a.extent.x && a.z < b.z + b.extent.z &&
           b.z < a.z + a.extent.z;
}

TEST(SceneLayoutTest, OnePlaneLiesAtTheOriginAndIsTheScene) {
    const SceneLayout scene = grid_layout({{5120, 2880}});
    ASSERT_EQ(scene.planes.size(), 1u);
    EXPECT_EQ(scene.planes[0].x, 0);
    EXPECT_EQ(scene.planes[0].z, 0);
    EXPECT_EQ(scene.planes[0].extent.x, 5120);
    EXPECT_EQ(scene.planes[0].extent.z, 2880);
    EXPECT_EQ(scene.extent.x, 5120);
    EXPECT_EQ(scene.extent.z, 2880);
}

TEST(SceneLayoutTest, PlanesFillAGridRowByRowAtTheirAspectWithoutOverlapping) {
    const std::vector<PlaneExtent> planes = {
        {4096, 4096}, {1024, 512}, {2048, 2048}, {512, 1024}, {1024, 1024}};
    const SceneLayout scene = grid_layout(planes);
    ASSERT_EQ(scene.planes.size(), planes.size());
    const double gap = 4096 * grid_gap_share;
    // Three columns of 4096 (the widest plane) with two gaps; two rows: 4096 and 1024 deep.
    EXPECT_DOUBLE_EQ(scene.extent.x, 3 * 4096 + 2 * gap);
    EXPECT_DOUBLE_EQ(scene.extent.z, 4096 + gap + 1024);
    for (std::size_t i = 0; i < planes.size(); ++i) {
        const PlanePlacement& p = scene.planes[i];
        EXPECT_EQ(p.extent.x, planes[i].x) << i;
        EXPECT_EQ(p.extent.z, planes[i].z) << i;
        EXPECT_GE(p.x, 0) << i;
        EXPECT_GE(p.z, 0) << i;
        EXPECT_LE(p.x + p.extent.x, scene.extent.x) << i;
        EXPECT_LE(p.z + p.extent.z, scene.extent.z) << i;
        for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(overlap(p, scene.planes[j])) << i << j;
    }
    // Row by row: the first three in the first row, left to right, the rest below.
    EXPECT_LT(scene.planes[0].x, scene.planes[1].x);
    EXPECT_LT(scene.planes[1].x, scene.planes[2].x);
    EXPECT_LT(scene.planes[2].z + scene.planes[2].extent.z, scene.planes[3].z);
    EXPECT_GE(scene.planes[3].z, 4096 + gap);
    EXPECT_LT(scene.planes[3].x, scene.planes[4].x);
    // Centred in its cell: the 1024 x 512 plane in a 4096 x 4096 cell.
    EXPECT_DOUBLE_EQ(scene.planes[1].x, 4096 + gap + (4096 - 1024) / 2.0);
    EXPECT_DOUBLE_EQ(scene.planes[1].z, (4096 - 512) / 2.0);
}

class TextureSetSourceTest : public testing::Test {
protected:
    void SetUp() override {
        folder_ = fs::path(testing::TempDir()) / "vtpage_texture_set_test" /
                  testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::remove_all(folder_);
        fs::create_directories(folder_);
    }
    std::string write(const std::string& name, const std::string& text) {
        const fs::path path = folder_ / name;
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
        return path.string();
    }
    // A tiny baked texture (256 x 256, RGBA8), the same texel pattern for every name.
    std::string bake(const std::string& name) {
        const fs::path path = folder_ / name;
        fs::create_directories(path.parent_path());
        vt::RgbaImage image;
        image.width = image.height = 256;
        image.texels.assign(std::size_t(256) * 256 * 4, 0x80);
        vt::bake_texture(image, path.string());
        return path.string();
    }
    // The UsageError's message that opening `path` gives ("" when it opens).
    static std::string refusal(const std::string& path) {
        try {
            open_texture_set(path);
        } catch (const UsageError& error) {
            return error.what();
        }
        return "";
    }

    fs::path folder_;
};

TEST_F(TextureSetSourceTest, AManifestOpensItsTexturesInOrderWithPathsRelativeToIt) {
    bake("maps/a.vtex");
    const std::string manifest =
        write("set.json",
              R"({"textures": [{"procedural": {"size_log2": 10, "seed": 7}}, "maps/a.vtex",
                         {"procedural": {"size_log2": 12, "format": "bc1"}}]})");
    EXPECT_TRUE(is_texture_set(manifest));
    const auto sources = open_texture_set(manifest);
    ASSERT_EQ(sources.size(), 3u);
    EXPECT_EQ(sources[0]->shape().width, 1024u);
    EXPECT_EQ(sources[1]->shape().width, 256u);
    EXPECT_EQ(sources[1]->name(), (folder_ / "maps/a.vtex").string());
    EXPECT_EQ(sources[2]->shape().width, 4096u);
    EXPECT_EQ(sources[2]->shape().format, vt::TileFormat::bc1);
    EXPECT_NE(sources[0]->name(), sources[2]->name());
}

TEST_F(TextureSetSourceTest, AFolderOpensEveryFileSortedByName) {
    bake("textures/b.vtex");
    bake("textures/a.vtex");
    fs::create_directories(folder_ / "textures/sub");  // not a file: left out
    const std::string folder = (folder_ / "textures").string();
    EXPECT_TRUE(is_texture_set(folder));
    const auto sources = open_texture_set(folder);
    ASSERT_EQ(sources.size(), 2u);
    EXPECT_EQ(sources[0]->name(), (folder_ / "textures/a.vtex").string());
    EXPECT_EQ(sources[1]->name(), (folder_ / "textures/b.vtex").string());
}

TEST_F(TextureSetSourceTest, AFolderWithAFileThatIsNoTextureIsRefusedNamingIt) {
    bake("textures/a.vtex");
    const std::string notes = write("textures/notes.txt", "not a texture");
    EXPECT_NE(refusal((folder_ / "textures").string()).find("cannot use " + notes),
              std::string::npos);
    fs::create_directories(folder_ / "empty");
    EXPECT_NE(refusal((folder_ / "empty").string()).find("holds no texture file"),
              std::string::npos);
}

struct BadManifest {
    std::string text;
    std::string says;
};

TEST_F(TextureSetSourceTest, EveryBadManifestIsRefusedSayingWhatIsWrong) {
    const std::vector<BadManifest> cases = {
        {"{\"textures\": [", "is not JSON"},
        {"[1, 2]", "must be an object"},
        {R"({"textures": []})", "lists no texture"},
        {R"({})", "\"textures\" is missing"},
        {R"({"textures": "a.vtex"})", "must be a list"},
        {R"({"textures": [{"procedural": {"size_log2": 10}}], "scale": 2})", "unknown key 'scale'"},
        {R"({"textures": [3]})", "textures[0] must be a file name or"},
        {R"({"textures": [""]})", "textures[0] is an empty path"},
        {R"({"textures": ["missing.vtex"]})", "cannot use"},
        {R"({"textures": [{"procedurall": {}}]})", "unknown key 'procedurall'"},
        {R"({"textures": [{}]})", "textures[0] is an empty object"},
        {R"({"textures": [{"procedural": 12}]})", "procedural must be an object"},
        {R"({"textures": [{"procedural": {"seed": 1}}]})", "size_log2 is missing"},
        {R"({"textures": [{"procedural": {"size_log2": -3}}]})",
         "size_log2 must be a whole number from 8 to 20, not -3"},
        {R"({"textures": [{"procedural": {"size_log2": 10.5}}]})", "not 10.5"},
        {R"({"textures": [{"procedural": {"size_log2": 21}}]})", "from 8 to 20, not 21"},
        {R"({"textures": [{"procedural": {"size_log2": 1e300}}]})", "size_log2 must be"},
        {R"({"textures": [{"procedural": {"size_log2": NaN}}]})", "is not JSON"},
        {R"({"textures": [{"procedural": {"size_log2": 10, "seed": 99999999999999999999}}]})",
         "seed must be a whole number from 0 to 4294967295"},
        {R"({"textures": [{"procedural": {"size_log2": "10"}}]})", "not \"10\""},
        {R"({"textures": [{"procedural": {"size_log2": 10, "format": "bc7"}}]})", "format must be"},
        {R"({"textures": [{"procedural": {"size_log2": 10, "tint": 1}}]})", "unknown key 'tint'"},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::string path = write("bad" + std::to_string(i) + ".json", cases[i].text);
        const std::string message = refusal(path);
        EXPECT_NE(message.find(cases[i].says), std::string::npos)
            << cases[i].text << " gave: " << message;
        EXPECT_NE(message.find(path), std::string::npos) << "names the manifest: " << message;
    }
    EXPECT_NE(refusal((folder_ / "absent.json").string()).find("cannot read"), std::string::npos);
}

TEST_F(TextureSetSourceTest, ASetBeyondTheLimitsIsRefused) {
    std::string many = R"({"textures": [)";
    for (std::size_t i = 0; i <= max_set_textures; ++i) {
        many += std::string(i ? ", " : "") + R"({"procedural": {"size_log2": 8}})";
    }
    EXPECT_NE(refusal(write("many.json", many + "]}")).find("at most 4096"), std::string::npos);
    // 2^20 texels a side: 3.2 million pages each; eleven of them pass 64 TiB.
    std::string huge = R"({"textures": [)";
    for (int i = 0; i < 11; ++i) {
        huge += std::string(i ? ", " : "") + R"({"procedural": {"size_log2": 20}})";
    }
    EXPECT_NE(refusal(write("huge.json", huge + "]}")).find("more than the"), std::string::npos);
}

TEST(TextureSetNameTest, OnlyFoldersAndJsonFilesAreSets) {
    EXPECT_FALSE(is_texture_set("terrain.vtex"));
    EXPECT_TRUE(is_texture_set("scene.json"));
    EXPECT_TRUE(is_texture_set(testing::TempDir()));
}

// vtpage-make-texture-set writes distinct, checksummed textures and the manifests that open
// them, once each and instanced; bad flags and a --dir that is a file exit 2.
std::string make_set_tool() {
    return (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "tools" /
            "make_texture_set" / "vtpage-make-texture-set")
        .string();
}

std::uint64_t page_hash(const vt::TileSource& source, std::uint64_t page) {
    std::vector<std::byte> bytes(vt::page_bytes);
    source.fill_host(page, bytes);
    return vt::checksum64(bytes);
}

TEST_F(TextureSetSourceTest, TheSetToolWritesDistinctTexturesAndManifestsThatOpen) {
    const std::string dir = (folder_ / "set").string();
    const test::ProgramResult run = test::run_program(
        {make_set_tool(), "--dir", dir, "--textures", "2", "--size-log2", "9", "--format", "rgba8",
         "--instances", "3", "--threads", "2", "--quiet", "--keep-free-gib", "0"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("2 textures of 2^9 rgba8"), std::string::npos) << run.output;
    for (const char* name : {"texture-000.vtex", "texture-001.vtex"}) {
        vt::BakedTextureArchive archive((fs::path(dir) / name).string());
        EXPECT_EQ(archive.shape(), (vt::TextureShape{512, 512, vt::TileFormat::rgba8}));
        EXPECT_NO_THROW(archive.check_all()) << name;
    }
    const auto once = open_texture_set((fs::path(dir) / "set.json").string());
    ASSERT_EQ(once.size(), 2u);
    const auto instanced = open_texture_set((fs::path(dir) / "instanced.json").string());
    ASSERT_EQ(instanced.size(), 6u);
    // Every page of the two textures differs; an instance reads its file's bytes.
    std::set<std::uint64_t> hashes;
    std::uint64_t pages = 0;
    for (const auto& source : once) {
        for (std::uint64_t p = 0; p + 1 < source->layout().page_count; ++p, ++pages) {
            hashes.insert(page_hash(*source, p));
        }
    }
    EXPECT_EQ(hashes.size(), pages);
    EXPECT_EQ(page_hash(*instanced[0], 0), page_hash(*instanced[2], 0));
    EXPECT_EQ(page_hash(*instanced[1], 0), page_hash(*instanced[5], 0));

    // The viewer flies the instanced set from its files: the pages arrive through the
    // streamer's read pipeline, none fails, and the settled view is reached.
    const std::string stats = (folder_ / "stats.json").string();
    const test::ProgramResult flight = test::run_program(
        {test::viewer_path(), "--headless", "--backend", "host", "--texture",
         (fs::path(dir) / "instanced.json").string(), "--width", "192", "--height", "108",
         "--budget-mib", "64", "--frames", "20", "--settle", "--quiet", "--stats", stats},
        {"DISPLAY", "WAYLAND_DISPLAY"});
    ASSERT_EQ(flight.exit_code, 0) << flight.output;
    std::ifstream stats_file(stats);
    const nlohmann::json report = nlohmann::json::parse(stats_file, nullptr, false);
    ASSERT_FALSE(report.is_discarded());
    EXPECT_EQ(report["settled"], true);
    EXPECT_EQ(report["textures"].size(), 6u);
    EXPECT_GT(report["file_reads"]["pages_loaded"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(report["file_reads"]["pages_failed"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(report["failed_pages"].get<std::uint64_t>(), 0u);
    EXPECT_GT(report["file_reads"]["bytes_read"].get<std::uint64_t>(), 0u);
    // The streamer chose its decode threads, and the decode threads' governor followed them.
    const auto started = report["file_reads"]["decode_threads"].get<std::size_t>();
    const auto active = report["file_reads"]["active_decode_threads"].get<std::size_t>();
    EXPECT_GE(active, 1u);
    EXPECT_LE(active, started);
    EXPECT_EQ(report["file_reads"]["decode_threads_governed"], true);

    const test::ProgramResult dropped =
        test::run_program({make_set_tool(), "--dir", dir, "--drop-cache"});
    EXPECT_EQ(dropped.exit_code, 0) << dropped.output;
    EXPECT_NE(dropped.output.find("dropped 4 files"), std::string::npos) << dropped.output;
}

TEST_F(TextureSetSourceTest, TheSetToolRefusesBadFlagsAndADirThatIsAFile) {
    const std::string file = write("a-file", "x");
    const std::string dir = (folder_ / "set").string();
    const std::vector<std::vector<std::string>> bad = {
        {"--textures", "2"},
        {"--dir", dir},
        {"--dir", dir, "--textures", "0"},
        {"--dir", dir, "--textures", "2", "--size-log2", "21"},
        {"--dir", dir, "--textures", "2", "--format", "bc7"},
        {"--dir", dir, "--textures", "-1"},
        {"--dir", dir, "--textures", "2", "--keep-free-gib", "nan"},
        {"--dir", file, "--textures", "1"},
        {"--dir", (folder_ / "missing").string(), "--drop-cache"},
    };
    for (const auto& flags : bad) {
        std::vector<std::string> argv{make_set_tool()};
        argv.insert(argv.end(), flags.begin(), flags.end());
        const test::ProgramResult run = test::run_program(argv);
        std::string shown;
        for (const auto& flag : flags) shown += flag + " ";
        EXPECT_EQ(run.exit_code, 2) << shown << run.output;
        EXPECT_NE(run.output.find("vtpage-make-texture-set"), std::string::npos) << run.output;
    }
    EXPECT_FALSE(fs::exists(dir)) << "nothing is written for a refused command";
}

// Far more than the disk holds is refused before a byte is written.
TEST_F(TextureSetSourceTest, TheSetToolRefusesWhatTheDiskCannotHold) {
    const std::string dir = (folder_ / "huge").string();
    const test::ProgramResult run =
        test::run_program({make_set_tool(), "--dir", dir, "--textures", "1", "--size-log2", "20",
                           "--quiet", "--keep-free-gib", "1000000"});
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("must stay free"), std::string::npos) << run.output;
    EXPECT_TRUE(fs::is_empty(dir));
}

// A manifest nested 100,000 levels deep is refused before parsing, by its depth (it crashed the
// viewer: the message serialised the value recursively). Run in a child, so that a crash fails
// this test alone.
TEST_F(TextureSetSourceTest, ADeeplyNestedManifestIsRefusedByItsDepth) {
    const std::string deep = write("deep.json", "{\"textures\": [" + std::string(100000, '[') +
                                                    std::string(100000, ']') + "]}");
    EXPECT_EXIT(
        {
            const std::string message = refusal(deep);
            std::_Exit(message.find("nests more than 8 levels deep") != std::string::npos ? 0 : 1);
        },
        testing::ExitedWithCode(0), "");
}

// The size is checked before parsing, and no message quotes more than a bounded excerpt of what
// it refuses (a 100 MB path was printed twice).
TEST_F(TextureSetSourceTest, ManifestsAreCappedInSizeAndMessagesInLength) {
    const std::string big =
        write("big.json", "{\"textures\": [\"" + std::string(max_manifest_bytes, 'a') + "\"]}");
    std::string message = refusal(big);
    EXPECT_NE(message.find("more than the 4194304 a manifest may have"), std::string::npos)
        << message.substr(0, 300);
    EXPECT_LT(message.size(), 400u);
    const std::string cases[] = {
        "{\"textures\": [\"" + std::string(100000, 'b') + "\"]}",
        "{\"textures\": [[\"" + std::string(100000, 'c') + "\"]]}",
        "{\"textures\": [{\"procedural\": {\"size_log2\": \"" + std::string(100000, 'd') + "\"}}]}",
        "{\"textures\": [{\"" + std::string(100000, 'e') + "\": 1}]}",
    };
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        message = refusal(write("long" + std::to_string(i) + ".json", cases[i]));
        EXPECT_FALSE(message.empty()) << i;
        EXPECT_LT(message.size(), 400u) << i << ": " << message.substr(0, 300);
    }
}

// A NUL byte in a path is refused naming the entry (it cut the path short, and a.vtex opened).
TEST_F(TextureSetSourceTest, APathWithANulByteIsRefused) {
    bake("a.vtex");
    const std::string message = refusal(write("nul.json", R"({"textures": ["a.vtex\u0000.x"]})"));
    EXPECT_NE(message.find("textures[0]: the path"), std::string::npos) << message;
    EXPECT_NE(message.find("holds a NUL byte"), std::string::npos) << message;
}

// Links that loop are refused naming the entry (a manifest's) or the file (a folder's), as bad
// input; a FIFO is said to be one, not "missing".
TEST_F(TextureSetSourceTest, LinkLoopsAndFifosAreRefusedInTheirOwnWords) {
    fs::create_symlink("loop.vtex", folder_ / "loop.vtex");
    std::string message = refusal(write("loop.json", R"({"textures": ["loop.vtex"]})"));
    EXPECT_NE(message.find("textures[0]: cannot use"), std::string::npos) << message;
    EXPECT_NE(message.find("a loop of symbolic links"), std::string::npos) << message;

    bake("looped/a.vtex");
    fs::create_symlink("b.vtex", folder_ / "looped/b.vtex");
    fs::create_symlink("a.vtex", folder_ / "looped/a-link.vtex");
    fs::remove(folder_ / "looped/b.vtex");
    fs::create_symlink("b.vtex", folder_ / "looped/b.vtex");  // b -> b
    message = refusal((folder_ / "looped").string());
    EXPECT_NE(message.find("looped/b.vtex"), std::string::npos) << message;
    EXPECT_NE(message.find("a loop of symbolic links"), std::string::npos) << message;

    ASSERT_EQ(::mkfifo((folder_ / "pipe.vtex").c_str(), 0600), 0);
    message = refusal(write("fifo.json", R"({"textures": ["pipe.vtex"]})"));
    EXPECT_NE(message.find("not a regular file (a FIFO"), std::string::npos) << message;
}

// Open descriptors and resident memory of this process (pages of /proc/self/statm).
std::size_t open_descriptors() {
    return std::size_t(std::distance(fs::directory_iterator("/proc/self/fd"), {}));
}
std::uint64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * std::uint64_t(::sysconf(_SC_PAGESIZE));
}

// The documented maximum, 4,096 entries, naming one file (by two names) share one open file and
// one source: it opens under `ulimit -n 1024` in little memory (one descriptor and 0.4 MB an
// entry ran out at entry 1018).
TEST_F(TextureSetSourceTest, EntriesNamingOneFileShareItsSource) {
    bake("one.vtex");
    fs::create_symlink("one.vtex", folder_ / "other-name.vtex");
    std::string many = R"({"textures": [)";
    for (std::size_t i = 0; i < max_set_textures; ++i) {
        many += std::string(i ? ", " : "") + (i % 2 ? "\"one.vtex\"" : "\"other-name.vtex\"");
    }
    const std::string manifest = write("many.json", many + "]}");
    EXPECT_EXIT(
        {
            rlimit limit{};
            ::getrlimit(RLIMIT_NOFILE, &limit);
            limit.rlim_cur = 1024;
            ::setrlimit(RLIMIT_NOFILE, &limit);
            const std::size_t fds_before = open_descriptors();
            const std::uint64_t bytes_before = resident_bytes();
            try {
                const auto sources = open_texture_set(manifest);
                const bool shared = sources.size() == max_set_textures &&
                                    sources.front() == sources.back() && sources[0] == sources[1];
                const bool few_fds = open_descriptors() <= fds_before + 2;
                const bool small = resident_bytes() - bytes_before < (std::uint64_t(64) << 20);
                std::fprintf(stderr, "shared %d, descriptors %d, memory %d\n", shared, few_fds,
                             small);
                std::_Exit(shared && few_fds && small ? 0 : 1);
            } catch (const std::exception& error) {
                std::fprintf(stderr, "%s\n", error.what());
                std::_Exit(2);
            }
        },
        testing::ExitedWithCode(0), "");
}

// The set tool writes its manifests as it writes its textures: never through a link planted at
// their names (a victim outside the folder was overwritten).
TEST_F(TextureSetSourceTest, TheSetToolDoesNotWriteManifestsThroughPlantedLinks) {
    const std::string dir = (folder_ / "planted").string();
    fs::create_directories(dir);
    const std::string victim = write("victim.txt", "precious");
    fs::create_symlink(victim, fs::path(dir) / "set.json");
    fs::create_symlink(victim, fs::path(dir) / "instanced.json");
    fs::create_symlink(victim, fs::path(dir) / "set.json.partial");
    const test::ProgramResult run =
        test::run_program({make_set_tool(), "--dir", dir, "--textures", "1", "--size-log2", "8",
                           "--instances", "2", "--quiet", "--keep-free-gib", "0"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    std::ifstream file(victim);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}), "precious");
    for (const char* name : {"set.json", "instanced.json"}) {
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(fs::path(dir) / name))) << name;
    }
    EXPECT_FALSE(fs::exists(fs::symlink_status(fs::path(dir) / "set.json.partial")));
    EXPECT_EQ(open_texture_set((fs::path(dir) / "instanced.json").string()).size(), 2u);
}

// A --dir that is a loop of links is a bad flag (it aborted on an uncaught exception).
TEST_F(TextureSetSourceTest, TheSetToolRefusesALinkLoopAsDir) {
    const fs::path loop = folder_ / "loop";
    fs::create_symlink("loop", loop);
    const test::ProgramResult run =
        test::run_program({make_set_tool(), "--dir", loop.string(), "--textures", "1"});
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("a loop of symbolic links"), std::string::npos) << run.output;
}

// SIGINT and SIGTERM remove the set tool's partial files; it exits 1.
TEST_F(TextureSetSourceTest, TheSetToolLeavesNoPartialFileWhenStopped) {
    for (const int signal : {SIGINT, SIGTERM}) {
        const fs::path dir = folder_ / ("stopped-" + std::to_string(signal));
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            const std::string tool = make_set_tool();
            ::execl(tool.c_str(), "vtpage-make-texture-set", "--dir", dir.c_str(), "--textures",
                    "64", "--size-log2", "13", "--format", "rgba8", "--zstd-level", "19",
                    "--threads", "1", "--quiet", "--keep-free-gib", "0", nullptr);
            ::_exit(127);
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        const fs::path partial = dir / "texture-000.vtex.partial";
        while (!fs::exists(partial) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (!fs::exists(partial)) {
            test::kill_and_reap(pid);
            FAIL() << "the tool never began writing";
        }
        ::kill(pid, signal);
        const std::optional<int> status = test::wait_for_exit(pid, std::chrono::seconds(60));
        ASSERT_TRUE(status) << "signal " << signal << ": still running 60 s later (killed)";
        EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1)
            << "signal " << signal << ": status " << *status;
        for (const auto& entry : fs::directory_iterator(dir)) {
            EXPECT_NE(entry.path().extension(), ".partial") << entry.path();
        }
    }
}

}  // namespace
}  // namespace vtpage::viewer
