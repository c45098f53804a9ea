// vtpage-make-texture-set: writes a set of baked textures (page archives, version 3) quickly, for
// streaming benchmarks from disk: every page distinct (procedural content of its own seed per
// texture), checksummed and zstd-compressed as the bake tool writes them, on every core, with a
// manifest for vtpage-viewer --texture.
//
//   vtpage-make-texture-set --dir D --textures 8 --size-log2 15 --format bc1 --instances 4
//     D/texture-000.vtex ...   the textures
//     D/set.json               each texture once
//     D/instanced.json         each texture 4 times: instances streamed and evicted on their own
//   vtpage-make-texture-set --dir D --drop-cache
//     drops the files of D from the page cache, so that the next flight reads them from disk
//
// Before each texture the free space is checked: the texture's pages uncompressed (what it can
// take at most) must leave --keep-free-gib free, or nothing more is written.
// Every file (textures and manifests) is written as <name>.partial, created exclusively and never
// through a symbolic link, and renamed into place when complete; SIGINT and SIGTERM remove the
// partial files being written.
// Exit status: 0 done, 1 an I/O error or SIGINT/SIGTERM, 2 bad flags or a refused --dir.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "vtpage/app/command_line.hpp"
#include "vtpage/app/interrupt_cleanup.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"
#include "vtpage/base/unique_fd.hpp"
#include "vtpage/streaming/archive/page_archive.hpp"
#include "vtpage/streaming/sources/baked_texture_descriptor.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace {

using namespace vtpage;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* program = "vtpage-make-texture-set";
constexpr double gib = double(1ull << 30);

struct Options {
    std::string dir;
    std::uint64_t textures = 0;
    std::uint64_t size_log2 = 14;
    std::string format = "bc1";
    std::uint64_t instances = 1;
    std::uint64_t seed = 1;
    int zstd_level = 1;
    std::uint64_t parts_per_page = vt::page_archive_default_parts_per_page;
    double keep_free_gib = 2;
    std::uint64_t threads = std::max(1u, std::thread::hardware_concurrency());
    bool drop_cache = false;
    bool quiet = false;
};

const std::map<std::string, vt::TileFormat> formats = {
    {"rgba8", vt::TileFormat::rgba8}, {"bc1", vt::TileFormat::bc1}, {"bc3", vt::TileFormat::bc3}};

std::uint64_t free_bytes(const std::string& folder) {
    struct statvfs info {};
    if (::statvfs(folder.c_str(), &info) != 0) {
        throw Error(Errc::io_error, program, "cannot read the free space of " + folder);
    }
    return std::uint64_t(info.f_bavail) * info.f_frsize;
}

std::string texture_name(std::uint64_t index) {
    std::string number = std::to_string(index);
    if (number.size() < 3) number.insert(0, 3 - number.size(), '0');
    return "texture-" + number + ".vtex";
}

// One texture: its pages filled and added by `threads` threads at once.
void write_texture(const Options& options, const std::string& path, std::uint32_t seed,
                   app::ProgressBar& progress, double done_before, double share) {
    const vt::ProceduralSource source({.seed = seed,
                                       .size_log2 = std::uint32_t(options.size_log2),
                                       .format = formats.at(options.format)});
    const vt::TextureShape shape = source.shape();
    const vt::BakedTextureDescriptor descriptor = vt::make_baked_texture_descriptor(shape, 8);
    // Registered before the writer makes the file: a signal in between finds nothing to remove.
    app::PartialFileGuard partial(path + ".partial");
    vt::PageArchiveWriter writer(path, vt::baked_archive_shape(shape),
                                 std::as_bytes(std::span(&descriptor, 1)),
                                 {.zstd_level = options.zstd_level,
                                  .parts_per_page = std::uint32_t(options.parts_per_page)});
    const std::uint64_t pages = source.layout().page_count;
    std::atomic<std::uint64_t> next{0}, written{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&] {
        std::vector<std::byte> page(vt::page_bytes);
        for (std::uint64_t p = next++; p < pages && !failed; p = next++) {
            try {
                source.fill_host(p, page);
                writer.add_page(p, page);
                ++written;
            } catch (...) {
                std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> threads;
    for (std::uint64_t t = 0; t < options.threads; ++t) threads.emplace_back(work);
    while (written < pages && !failed) {
        progress.update(done_before + share * double(written) / double(pages),
                        fs::path(path).filename().string());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (auto& thread : threads) thread.join();
    if (error) std::rethrow_exception(error);
    writer.finish();
}

[[noreturn]] void write_failed(const std::string& path, const char* what) {
    const int error = errno;
    throw Error(Errc::io_error, program,
                detail::concat("cannot ", what, " ", path, ": ", errno_message(error)));
}

// Creates path exclusively and never through a link (a stale one of an earlier run, a file or a
// link, is removed first: unlink removes a link, not what it names).
UniqueFd create_partial(const std::string& path) {
    constexpr int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    UniqueFd fd(::open(path.c_str(), flags, 0644));
    if (!fd && errno == EEXIST && ::unlink(path.c_str()) == 0) {
        fd = UniqueFd(::open(path.c_str(), flags, 0644));
    }
    if (!fd) write_failed(path, "create");
    return fd;
}

// A manifest, written as <path>.partial and renamed over path when complete.
void write_manifest(const std::string& path, const std::vector<std::string>& names,
                    std::uint64_t copies) {
    nlohmann::json manifest;
    manifest["textures"] = nlohmann::json::array();
    for (std::uint64_t copy = 0; copy < copies; ++copy) {
        for (const std::string& name : names) manifest["textures"].push_back(name);
    }
    const std::string text = manifest.dump(1) + "\n";
    const std::string partial_path = path + ".partial";
    app::PartialFileGuard partial(partial_path);  // before the file exists, as above
    UniqueFd fd = create_partial(partial_path);
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t wrote = ::write(fd.get(), text.data() + done, text.size() - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            ::unlink(partial_path.c_str());
            write_failed(partial_path, "write");
        }
        done += std::size_t(wrote);
    }
    if (::fsync(fd.get()) != 0 || ::rename(partial_path.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(partial_path.c_str());
        errno = error;
        write_failed(path, "write");
    }
    partial.finish();
}

int generate(const Options& options) {
    fs::create_directories(options.dir);
    const vt::ProceduralSource probe(
        {.size_log2 = std::uint32_t(options.size_log2), .format = formats.at(options.format)});
    const std::uint64_t texture_bytes = probe.layout().page_count * vt::page_bytes;
    const auto keep = std::uint64_t(options.keep_free_gib * gib);
    app::ProgressBar progress({.label = "writing textures", .enabled = !options.quiet});
    const auto start = Clock::now();
    std::vector<std::string> names;
    std::uint64_t stored = 0;
    for (std::uint64_t i = 0; i < options.textures; ++i) {
        const std::uint64_t available = free_bytes(options.dir);
        if (available < texture_bytes + keep) {
            progress.end();
            return app::report(
                program, app::exit_usage,
                detail::concat("--dir ", options.dir, ": ", double(available) / gib,
                               " GiB free; texture ", i, " may take ", double(texture_bytes) / gib,
                               " GiB and ", options.keep_free_gib, " GiB must stay free (", i,
                               " textures written)"));
        }
        const std::string name = texture_name(i);
        const std::string path = (fs::path(options.dir) / name).string();
        write_texture(options, path, std::uint32_t(options.seed + i), progress,
                      double(i) / double(options.textures), 1.0 / double(options.textures));
        stored += fs::file_size(path);
        names.push_back(name);
    }
    write_manifest((fs::path(options.dir) / "set.json").string(), names, 1);
    if (options.instances > 1) {
        write_manifest((fs::path(options.dir) / "instanced.json").string(), names,
                       options.instances);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double pages = double(probe.layout().page_count * options.textures);
    progress.finish(detail::concat(options.textures, " textures"));
    std::printf(
        "%llu textures of 2^%llu %s: %.0f pages (%.2f GiB as pages), %.2f GiB on disk, in %.1f s "
        "(%.0f pages/s); instanced: %llu x = %.2f TiB of virtual texture\n",
        static_cast<unsigned long long>(options.textures),
        static_cast<unsigned long long>(options.size_log2), options.format.c_str(), pages,
        pages * double(vt::page_bytes) / gib, double(stored) / gib, seconds, pages / seconds,
        static_cast<unsigned long long>(options.instances),
        pages * double(options.instances) * double(vt::page_bytes) / gib / 1024);
    return app::exit_success;
}

// Drops the cached pages of every regular file in the folder.
int drop_cache(const Options& options) {
    std::uint64_t files = 0;
    for (const auto& entry : fs::directory_iterator(options.dir)) {
        std::error_code not_a_file;  // a loop of links is skipped, not thrown
        if (!entry.is_regular_file(not_a_file)) continue;
        const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
        ++files;
    }
    std::printf("dropped %llu files of %s from the page cache\n",
                static_cast<unsigned long long>(files), options.dir.c_str());
    return app::exit_success;
}

}  // namespace

static int run(int argc, char** argv) {
    CLI::App app{
        "vtpage-make-texture-set: writes a set of distinct baked textures for streaming "
        "benchmarks, with manifests for vtpage-viewer --texture",
        program};
    Options options;
    app.add_option("--dir", options.dir, "The folder to write into (created when missing)");
    app.add_option("--textures", options.textures, "How many textures")
        ->check(app::count_in(1, 4096));
    app.add_option("--size-log2", options.size_log2, "Each texture is 2^N x 2^N texels")
        ->check(app::count_in(8, vt::max_size_log2));
    app.add_option("--format", options.format, "rgba8, bc1 or bc3")
        ->check(CLI::IsMember({"rgba8", "bc1", "bc3"}));
    app.add_option("--instances", options.instances,
                   "instanced.json lists every texture this many times")
        ->check(app::count_in(1, 4096));
    app.add_option("--seed", options.seed, "The first texture's seed (then +1 each)")
        ->check(app::count_in(0, 1u << 30));
    app.add_option("--zstd-level", options.zstd_level,
                   "zstd level of the pages (1 .. 19; -1 .. -10 are zstd's fast levels: larger "
                   "pages that decode faster)")
        ->check(app::integer_in(vt::page_archive_fastest_zstd_level,
                                vt::page_archive_smallest_zstd_level))
        ->check(app::not_zero())
        ->capture_default_str();
    app.add_option("--parts-per-page", options.parts_per_page,
                   "zstd frames a page is stored in, decoded on as many threads at once")
        ->check(app::count_in(1, vt::page_archive_max_parts_per_page))
        ->capture_default_str();
    app.add_option("--keep-free-gib", options.keep_free_gib, "Free space that must remain")
        ->check(app::number_in(0, 1 << 20));
    app.add_option("--threads", options.threads, "Threads filling and compressing pages")
        ->check(app::count_in(1, 1024));
    app.add_flag("--drop-cache", options.drop_cache,
                 "Only drop the folder's files from the page cache");
    app.add_flag("--quiet", options.quiet, "No progress bar");
    app.footer(
        "Exit status: 0 done; 1 an I/O error, or SIGINT/SIGTERM (the partial files are "
        "removed); 2 bad flags or a refused --dir (not a folder, a loop of links, too little "
        "free space).");
    // --dir is checked here, after the flags: an unknown flag is named before a missing one.
    if (auto status = app::parse_command_line(app, argc, argv, [&] {
            if (options.dir.empty()) throw CLI::RequiredError("--dir");
            if (!options.drop_cache && options.textures == 0) {
                throw CLI::RequiredError("--textures (or --drop-cache)");
            }
            // stat() rather than std::filesystem: a loop of links is said, not thrown.
            struct stat dir_status {};
            const bool found = ::stat(options.dir.c_str(), &dir_status) == 0;
            if (!found && errno == ELOOP) {
                throw CLI::ValidationError("--dir", options.dir + " is a loop of symbolic links");
            }
            if (found && !S_ISDIR(dir_status.st_mode)) {
                throw CLI::ValidationError("--dir", options.dir + " is not a folder");
            }
            if (options.drop_cache && !found) {
                throw CLI::ValidationError("--dir", options.dir + " does not exist");
            }
        })) {
        return *status;
    }
    app::remove_partial_files_on_interrupt(program);
    try {
        return options.drop_cache ? drop_cache(options) : generate(options);
    } catch (const std::exception& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}

// What the program's own handling lets through (CLI11's errors in setting up the flags, say)
// ends it with a message and status 1 rather than std::terminate.
int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}
