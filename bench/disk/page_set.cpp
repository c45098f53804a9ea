#include "page_set.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "parallel.hpp"
#include "support/report_table.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::bench::disk {

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t set_page_bytes = 2u << 20;
constexpr std::uint32_t set_tile_bytes = 64u << 10;  // an RGBA8 tile of 128 x 128 texels
constexpr std::uint64_t pages_per_file = 256;        // 512 MiB files
constexpr double gib = double(1u << 30);

bool is_page_archive(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[sizeof vt::page_archive_magic] = {};
    return in.read(magic, sizeof magic) &&
           std::memcmp(magic, vt::page_archive_magic, sizeof magic) == 0;
}

std::vector<fs::path> archive_files(const std::string& folder) {
    std::error_code error;
    if (!fs::is_directory(folder, error)) {
        throw Error(Errc::invalid_argument, "open_page_set", "--dir " + folder + ": no folder");
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (entry.is_regular_file() && is_page_archive(entry.path())) files.push_back(entry);
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Cheap pages that differ everywhere yet compress like textures: one byte of 64-bit noise per
// word beside a slow gradient, from a seed per page (splitmix64 then xorshift).
void fill_page(std::uint64_t seed, std::span<std::byte> page) {
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E5F5ull;
    state ^= state >> 31;
    const std::size_t words = page.size() / sizeof(std::uint64_t);
    for (std::size_t i = 0; i < words; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const std::uint64_t word = (state >> 56) | (std::uint64_t(i >> 9) << 32) | (seed << 48);
        std::memcpy(page.data() + i * sizeof word, &word, sizeof word);
    }
}

std::string archive_name(std::uint64_t file) {
    char name[32];
    std::snprintf(name, sizeof name, "pages-%04llu.vtpa", static_cast<unsigned long long>(file));
    return name;
}

}  // namespace

std::uint64_t PageSet::total_file_bytes() const {
    std::uint64_t total = 0;
    for (std::uint64_t bytes : file_bytes) total += bytes;
    return total;
}

PageSet open_page_set(const std::string& folder) {
    PageSet set;
    for (const fs::path& path : archive_files(folder)) {
        auto archive = std::make_unique<vt::PageArchive>(path.string());
        const vt::PageArchiveShape shape = archive->shape();
        for (std::uint64_t page = 0; page < shape.page_count; ++page) {
            const vt::StoredExtent extent = archive->stored_extent(page);
            set.pages.push_back({set.archives.size(), page, extent});
            set.stored_bytes += extent.bytes;
            set.largest_extent = std::max(set.largest_extent, extent.bytes);
        }
        set.page_bytes = std::max(set.page_bytes, shape.page_bytes);
        set.file_bytes.push_back(fs::file_size(path));
        set.archives.push_back(std::move(archive));
    }
    if (set.pages.empty()) {
        throw Error(Errc::invalid_argument, "open_page_set",
                    "--dir " + folder + ": no page archive in the folder");
    }
    return set;
}

void check_free_space(const std::string& folder, std::uint64_t bytes, std::uint64_t keep_free) {
    struct statvfs info {};
    if (::statvfs(folder.c_str(), &info) != 0) {
        throw Error(Errc::io_error, "check_free_space", "--dir " + folder + ": " + strerror(errno));
    }
    const std::uint64_t free_bytes = std::uint64_t(info.f_bavail) * info.f_frsize;
    if (free_bytes < bytes || free_bytes - bytes < keep_free) {
        throw Error(
            Errc::invalid_argument, "check_free_space",
            detail::concat("--dir ", folder, ": ", fixed(double(free_bytes) / gib),
                           " GiB free; writing ", fixed(double(bytes) / gib),
                           " GiB would leave less than ", fixed(double(keep_free) / gib), " GiB"));
    }
}

void generate_page_set(const std::string& folder, std::uint64_t bytes, bool quiet,
                       std::uint32_t parts_per_page) {
    fs::create_directories(folder);
    const std::uint64_t pages = std::max<std::uint64_t>(1, bytes / set_page_bytes);
    const std::uint64_t per_file = std::clamp<std::uint64_t>(pages / 4, 1, pages_per_file);
    const std::uint64_t files = (pages + per_file - 1) / per_file;
    const vt::PageArchiveShape shape{0, set_page_bytes, set_tile_bytes,
                                     std::uint32_t(set_page_bytes / set_tile_bytes)};
    const std::string descriptor = "vtpage-bench-disk page set";
    const auto descriptor_bytes = std::as_bytes(std::span(descriptor));
    app::ProgressBar progress({.label = "writing pages", .enabled = !quiet});
    std::atomic<std::uint64_t> written{0};
    const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
    for (std::uint64_t file = 0; file < files; ++file) {
        vt::PageArchiveShape file_shape = shape;
        file_shape.page_count = std::min(per_file, pages - file * per_file);
        vt::PageArchiveWriter writer((fs::path(folder) / archive_name(file)).string(), file_shape,
                                     descriptor_bytes,
                                     {.zstd_level = 1, .parts_per_page = parts_per_page});
        std::atomic<std::uint64_t> next{0};
        run_parallel(threads, [&](std::size_t, const std::atomic<bool>& stop) {
            std::vector<std::byte> page(set_page_bytes);
            for (std::uint64_t p; !stop && (p = next++) < file_shape.page_count;) {
                fill_page(file * per_file + p + 1, page);
                writer.add_page(p, page);
                const std::uint64_t count = ++written;
                progress.update(double(count) / double(pages),
                                detail::concat(count, " of ", pages, " pages"));
            }
        });
        writer.finish();
    }
    progress.finish(detail::concat(pages, " pages in ", files, " archives"));
}

}  // namespace vtpage::bench::disk
