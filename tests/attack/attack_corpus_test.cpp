// The attack corpus: what a hostile user hands the tools and the viewer (image bombs, formats
// that are blocked, outputs that are not ours to replace, deep, huge and broken manifests, link
// loops, planted links), each run as a program under an address-space limit (RLIMIT_AS in the
// child, so that a regression fails here instead of exhausting the machine) and checked for its
// exit status, its message, its time and its peak memory.
//
// The image files are in tests/attack/corpus (make_corpus.py writes the bombs); the manifests,
// links and loops are made here, in a folder of the test's own.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "../bake/under_sanitizer.hpp"
#include "../support/temporary_folder.hpp"

namespace vtpage {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Each run: at most this much address space, this much resident memory and this long.
constexpr rlim_t address_space_limit = rlim_t(2) << 30;
constexpr long peak_limit_kib = 2 * 1024 * 1024;
constexpr double seconds_limit = 10;

struct LimitedRun {
    int exit_code = -1;  // -1: ended by a signal
    int signal = 0;
    double seconds = 0;
    long peak_kib = 0;
    std::string output;
};

// Runs argv under the address-space limit; kills it after 60 s (a hang fails on time).
LimitedRun run_limited(const std::vector<std::string>& argv, const std::string& log_path) {
    LimitedRun run;
    const auto start = Clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) return run;
    if (pid == 0) {
        // A sanitized program reserves terabytes of shadow address space: there the time and
        // peak-memory checks stand alone.
        if (!test::under_sanitizer) {
            const rlimit limit{address_space_limit, address_space_limit};
            ::setrlimit(RLIMIT_AS, &limit);
        }
        const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(log, 1);
        ::dup2(log, 2);
        ::unsetenv("DISPLAY");
        ::unsetenv("WAYLAND_DISPLAY");
        std::vector<char*> words;
        for (const std::string& word : argv) words.push_back(const_cast<char*>(word.c_str()));
        words.push_back(nullptr);
        ::execv(words[0], words.data());
        ::_exit(127);
    }
    int status = 0;
    rusage usage{};
    while (::wait4(pid, &status, WNOHANG, &usage) == 0) {
        if (Clock::now() - start > std::chrono::seconds(60)) ::kill(pid, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.peak_kib = usage.ru_maxrss;
    if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
    std::ifstream log(log_path);
    run.output.assign(std::istreambuf_iterator<char>(log), {});
    return run;
}

struct Attack {
    std::string name;
    std::vector<std::string> argv;
    int exit_code;
    std::string says;  // in the output
};

class AttackCorpusTest : public testing::Test {
protected:
    std::string corpus(const std::string& name) const {
        return (fs::path(VTPAGE_ATTACK_CORPUS) / name).string();
    }
    std::string file(const std::string& name, const std::string& text) {
        const std::string path = folder_.file(name);
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    void run_all(const std::vector<Attack>& attacks) {
        for (const Attack& attack : attacks) {
            const LimitedRun run = run_limited(attack.argv, folder_.file("log.txt"));
            const std::string shown = attack.name + ": " + run.output.substr(0, 2000);
            EXPECT_EQ(run.signal, 0) << shown;
            EXPECT_EQ(run.exit_code, attack.exit_code) << shown;
            EXPECT_NE(run.output.find(attack.says), std::string::npos) << shown;
            EXPECT_LT(run.seconds, seconds_limit) << shown;
            EXPECT_LT(run.peak_kib, peak_limit_kib) << shown;
            RecordProperty(attack.name + "_ms", int(run.seconds * 1000));
            RecordProperty(attack.name + "_peak_mib", int(run.peak_kib / 1024));
        }
    }
    test::TemporaryFolder folder_;
};

const std::string bake_tool = VTPAGE_BAKE_TOOL;
const std::string set_tool = VTPAGE_SET_TOOL;
const std::string viewer = VTPAGE_VIEWER;

// Image bombs exit 2 from the header (a 62-byte GIF of 65535 x 65535 reached 17.2 GiB; a
// progressive JPEG patched to 65500 x 65500, 13.0 GiB); the formats libvips marks untrusted
// (PDF, SVG, PGM) are blocked; a small progressive JPEG still bakes.
TEST_F(AttackCorpusTest, TheBakerRefusesImageBombsAndBlockedFormats) {
    const std::string out = folder_.file("out.vtex");
    const auto bake = [&](const std::string& image) {
        return std::vector<std::string>{bake_tool, "-q", corpus(image), "-o", out};
    };
    run_all({
        {"gif_bomb", bake("gif-bomb-65535.gif"), 2, "(--max-memory-gib)"},
        {"progressive_jpeg_bomb", bake("progressive-bomb-65500.jpg"), 2, "(--max-memory-gib)"},
        {"pdf", bake("pdf-page-14400000pt.pdf"), 2, "--allow-untrusted-loaders"},
        {"svg", bake("svg-100000.svg"), 2, "--allow-untrusted-loaders"},
        {"pgm", bake("pgm-header-60000.pgm"), 2, "--allow-untrusted-loaders"},
        {"small_progressive_jpeg", bake("progressive-16x12.jpg"), 0, "16 x 12, bc1"},
    });
    EXPECT_FALSE(fs::exists(out + ".partial"));
}

// Outputs that are not the baker's to replace are refused before any work.
TEST_F(AttackCorpusTest, TheBakerRefusesOutputsThatAreNotItsToReplace) {
    const std::string image = folder_.file("image.jpg");
    fs::copy_file(corpus("progressive-16x12.jpg"), image);
    const std::string fifo = folder_.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    fs::create_directory(folder_.file("folder"));
    run_all({
        {"output_fifo", {bake_tool, "-q", image, "-o", fifo}, 2, "not a regular file"},
        {"output_folder", {bake_tool, "-q", image, "-o", folder_.file("folder")}, 2, "a folder"},
        {"output_is_input", {bake_tool, "-q", image, "-o", image}, 2, "the image being baked"},
    });
    struct stat status {};
    ASSERT_EQ(::stat(fifo.c_str(), &status), 0);
    EXPECT_TRUE(S_ISFIFO(status.st_mode));
}

// The set tool refuses a loop as --dir and writes nothing through links planted at its names.
TEST_F(AttackCorpusTest, TheSetToolRefusesLoopsAndPlantedLinks) {
    const std::string loop = folder_.file("loop");
    fs::create_symlink("loop", loop);
    const std::string dir = folder_.file("planted");
    fs::create_directory(dir);
    const std::string victim = file("victim", "precious");
    for (const char* name : {"set.json", "instanced.json", "instanced.json.partial"}) {
        fs::create_symlink(victim, fs::path(dir) / name);
    }
    run_all({
        {"set_dir_loop", {set_tool, "--dir", loop, "--textures", "1"}, 2, "loop of symbolic links"},
        {"set_planted_links",
         {set_tool, "--dir", dir, "--textures", "1", "--size-log2", "8", "--instances", "2",
          "--quiet", "--keep-free-gib", "0"},
         0,
         "1 textures"},
    });
    std::ifstream kept(victim);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "precious");
}

// Manifests and paths handed to the viewer: each is bad input (exit 2) said before any device
// work, none crashes (a 100,000-deep manifest was a SIGSEGV, a loop an abort).
TEST_F(AttackCorpusTest, TheViewerRefusesHostileManifestsAndPaths) {
    if (viewer.empty()) GTEST_SKIP() << "vtpage-viewer is not built here (no Vulkan)";
    const std::string deep = file("deep.json", "{\"textures\": [" + std::string(100000, '[') +
                                                   std::string(100000, ']') + "]}");
    // 100 MB, sparse: refused by its size, before a byte is read.
    const std::string huge = folder_.file("huge.json");
    {
        const int fd = ::open(huge.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ASSERT_EQ(::ftruncate(fd, 100 << 20), 0);
        ::close(fd);
    }
    const std::string nul = file("nul.json", "{\"textures\": [\"huge.json\\u0000x\"]}");
    const std::string loop = folder_.file("loop.vtex");
    fs::create_symlink("loop.vtex", loop);
    const std::string loop_entry = file("loop-entry.json", "{\"textures\": [\"loop.vtex\"]}");
    const std::string looped_folder = folder_.file("looped");
    fs::create_directory(looped_folder);
    fs::create_symlink("a.vtex", fs::path(looped_folder) / "a.vtex");
    const std::string fifo = folder_.file("pipe.vtex");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto view = [&](const std::string& texture) {
        return std::vector<std::string>{viewer,  "--headless", "--backend", "host",   "--texture",
                                        texture, "--frames",   "1",         "--quiet"};
    };
    run_all({
        {"deep_manifest", view(deep), 2, "nests more than 8 levels deep"},
        {"huge_manifest", view(huge), 2, "more than the 4194304 a manifest may have"},
        {"nul_in_path", view(nul), 2, "holds a NUL byte"},
        {"loop_as_texture", view(loop), 2, "loop of symbolic links"},
        {"loop_in_manifest", view(loop_entry), 2, "textures[0]: cannot use"},
        {"loop_in_folder", view(looped_folder), 2, "loop of symbolic links"},
        {"fifo_as_texture", view(fifo), 2, "not a regular file or folder (a FIFO"},
    });
}

}  // namespace
}  // namespace vtpage
