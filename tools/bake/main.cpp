// vtpage-bake: turns an image (JPEG, PNG, WebP, TIFF and BigTIFF, GIF, HEIF, 8 or 16 bits; the
// other formats libvips reads with --allow-untrusted-loaders) into a baked virtual texture of
// version 3 (tiled, mip-mapped, bordered, encoded in a tile format, zstd-compressed, checksummed
// with XXH3, its address modes and colour space recorded and followed: edge borders as the modes
// sample, sRGB levels filtered in linear light, sRGB the default for rgba8, bc1 and bc3; see
// vtpage/streaming/sources/baked_texture_archive.hpp), or checks a baked file of version 1, 2
// or 3. The image is read row by row, so memory follows its width and not its height, except where
// its format is decoded whole (a GIF, a progressive JPEG, an interlaced PNG, WebP, HEIF): what that
// takes is checked from the header against
// --max-memory-gib, and the process holds itself to that limit (RLIMIT_DATA) besides.
//
//   vtpage-bake photo.tif -o photo.vtex      bake (--format auto: bc3 with alpha, bc4 for grey,
//                                            bc1 otherwise), then PSNR per level and a summary
//   vtpage-bake --check photo.vtex           verify every page; exit 2 with the problem if corrupt
//   vtpage-bake --procedural out.png --size-log2 9 --seed 7
//                                            write mip 0 of the procedural texture as a PNG
//
// Exit status: 0 done, 1 an unexpected failure (or a file that cannot be written, or SIGINT or
// SIGTERM, after which no partial file is left), 2 bad flags or bad input (a missing,
// unreadable, corrupt or oversized image, not a regular file, a blocked format; an output that is
// a folder, a device or the image itself). The message names the file it is about: the image for
// an input problem, the output for a write. The image's shape, the most the file could take and
// the memory the bake needs are checked from the image's header, before anything is decoded
// (--max-output-gib, --max-memory-gib).
#include <stb_image_write.h>
#include <CLI/CLI.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "format_choice.hpp"
#include "texture_baker.hpp"
#include "vips_image_reader.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/interrupt_cleanup.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/streaming/sources/baked_texture.hpp"
#include "vtpage/streaming/sources/baked_texture_archive.hpp"
#include "vtpage/streaming/sources/procedural_source.hpp"

namespace {

using namespace vtpage;
using namespace vtpage::vt;

constexpr const char* program = "vtpage-bake";

int fail(const std::string& path, const std::string& message, int code = app::exit_usage) {
    return app::report(program, code, path + ": " + message);
}

// The library's errors name the problem in their detail. Reading bad input is exit 2; a file
// that cannot be written (a full disk, a link in the way) is a failure of the work, exit 1.
int fail(const std::string& path, const Error& error, bool writing = false) {
    const bool bad_input =
        !writing && (error.code() == Errc::corrupt_data || error.code() == Errc::io_error ||
                     error.code() == Errc::invalid_argument);
    std::string message = error.detail();
    if (error.code() != Errc::corrupt_data) {
        message = std::string(to_string(error.code())) + ": " + message;
    }
    return fail(path, message, bad_input ? app::exit_usage : app::exit_failure);
}

struct BakeFlags {
    std::string format = "auto";
    std::string quality = "fast";
    double max_output_gib = 16;
    double max_memory_gib = 4;
    std::uint64_t threads = 0;  // 0: one per core
    int zstd_level = 3;
    std::uint64_t parts_per_page = vt::page_archive_default_parts_per_page;
    std::string address_u = "clamp";
    std::string address_v = "clamp";
    bool srgb = false;
    bool linear = false;
    bool allow_untrusted = false;
    bool quiet = false;
};

constexpr double gib = double(std::uint64_t(1) << 30);

AddressMode parse_address_mode(const std::string& name) {
    if (name == "repeat") return AddressMode::repeat;
    if (name == "mirror") return AddressMode::mirrored_repeat;
    return AddressMode::clamp_to_edge;  // "clamp": CLI11 has refused anything else
}

// The sampling the file records and the bake follows: the address modes as given; the colour
// space sRGB for a format that has it (a format chosen by auto included) unless --linear, linear
// otherwise. --srgb for a format without sRGB is refused.
TextureSampling sampling_for(const BakeFlags& flags, TileFormat format) {
    TextureSampling sampling{parse_address_mode(flags.address_u),
                             parse_address_mode(flags.address_v), ColorSpace::linear};
    if (flags.srgb && !srgb_allowed(format)) {
        throw Error(
            Errc::invalid_argument, "vtpage-bake",
            detail::concat("--srgb: sRGB is only for rgba8, bc1 and bc3, and the format is ",
                           tile_format_name(format)));
    }
    if (!flags.linear && srgb_allowed(format)) sampling.color_space = ColorSpace::srgb;
    return sampling;
}

// The output may not be a folder, a device, a FIFO or a socket (the finished file would be
// renamed over it), nor the image itself: said before any work, as bad flags (exit 2).
std::optional<std::string> refused_output(const std::string& input, const std::string& output) {
    struct stat out {};
    if (::stat(output.c_str(), &out) != 0) return std::nullopt;  // not there: written fresh
    if (S_ISDIR(out.st_mode)) return "is a folder; give the baked file's name";
    if (!S_ISREG(out.st_mode)) {
        return "exists and is not a regular file (a device, FIFO or socket), which the baked "
               "file would replace";
    }
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
        return "is the image being baked (" + input + ")";
    }
    return std::nullopt;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized_build = true;
#else
constexpr bool sanitized_build = false;
#endif
#else
constexpr bool sanitized_build = false;
#endif

// The memory the process may take, a little above what the header check allows (thread stacks,
// libraries), so that an image the check misjudges fails its allocation instead of taking the
// machine.
void limit_own_memory(double max_memory_gib) {
    // A sanitizer's allocator and shadow take far more than the image needs: under one, the
    // header check is the limit.
    if (sanitized_build) return;
    const auto bytes = rlim_t(max_memory_gib * gib) + (rlim_t(1) << 30);
    rlimit limit{};
    if (::getrlimit(RLIMIT_DATA, &limit) != 0) return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < bytes) return;  // already lower
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_DATA, &limit);
}

double peak_memory_mib() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

void print_report(const std::string& output, const bake::TextureBakeReport& report) {
    for (const bake::LevelQuality& level : report.levels) {
        if (level.exact()) {
            std::printf("mip %2u  %7u x %-7u  exact\n", level.mip, level.width, level.height);
        } else {
            std::printf("mip %2u  %7u x %-7u  PSNR %.2f dB\n", level.mip, level.width, level.height,
                        level.psnr());
        }
    }
    const double texels = double(report.shape.width) * report.shape.height;
    std::printf(
        "%s: %u x %u, %s, %u mips, %llu pages, %.1f MiB, %.1f megatexels/s, peak memory "
        "%.1f MiB\n",
        output.c_str(), report.shape.width, report.shape.height,
        tile_format_name(report.shape.format), report.mip_count,
        static_cast<unsigned long long>(report.page_count),
        double(report.file_bytes) / double(1 << 20), texels / 1e6 / std::max(report.seconds, 1e-9),
        peak_memory_mib());
}

// The settings for this image: its format chosen and its limits checked, from the header alone.
bake::TextureBakeSettings settings_for(const bake::VipsImageReader& reader,
                                       const BakeFlags& flags) {
    const bake::FormatChoice choice =
        bake::choose_format(bake::parse_format(flags.format), reader.info());
    bake::TextureBakeSettings settings;
    settings.format = choice.format;
    settings.quality =
        flags.quality == "fast" ? bake::EncodeQuality::fast : bake::EncodeQuality::good;
    settings.max_output_bytes = std::uint64_t(flags.max_output_gib * gib);
    settings.max_memory_bytes = std::uint64_t(flags.max_memory_gib * gib);
    settings.threads = unsigned(flags.threads);
    settings.zstd_level = flags.zstd_level;
    settings.parts_per_page = std::uint32_t(flags.parts_per_page);
    settings.sampling = sampling_for(flags, choice.format);
    bake::check_bake_limits(reader.info(), settings);
    std::printf("format %s (%s), quality %s, address %s x %s, %s\n",
                tile_format_name(choice.format), choice.reason.c_str(), flags.quality.c_str(),
                address_mode_name(settings.sampling.address_u).data(),
                address_mode_name(settings.sampling.address_v).data(),
                color_space_name(settings.sampling.color_space).data());
    return settings;
}

int bake_image(const std::string& input, const std::string& output, const BakeFlags& flags) {
    if (auto refused = refused_output(input, output)) return fail(output, *refused);
    limit_own_memory(flags.max_memory_gib);
    std::optional<bake::VipsImageReader> reader;
    bake::TextureBakeSettings settings;
    try {
        bake::allow_untrusted_loaders(flags.allow_untrusted);
        reader.emplace(input);
        settings = settings_for(*reader, flags);
    } catch (const Error& error) {
        return fail(input, error);
    }
    app::ProgressBar bar({.enabled = !flags.quiet});
    settings.progress = [&](double fraction, std::string_view stage) {
        bar.update(fraction, stage);
    };
    std::optional<app::PartialFileGuard> partial;
    settings.partial_created = [&](const std::string& path) { partial.emplace(path); };
    try {
        const bake::TextureBakeReport report =
            bake::bake_texture_archive(*reader, output, settings);
        bar.finish("baked");
        print_report(output, report);
        return 0;
    } catch (const Error& error) {
        bar.end();
        // Bytes libvips cannot decode are the input's fault; anything else is the output's.
        if (error.code() == Errc::corrupt_data) return fail(input, error);
        return fail(output, error, /*writing=*/true);
    }
}

int check_v1(const std::string& path, app::ProgressBar& bar) {
    const BakedTextureFile file(path);
    file.check_all([&](double fraction) { bar.update(fraction, "checking tiles"); });
    bar.finish("checked");
    const BakedHeader& header = file.header();
    std::printf("%s: ok: version 1, 2^%u texels, %llu pages, %llu tiles checked\n", path.c_str(),
                header.size_log2, static_cast<unsigned long long>(header.page_count),
                static_cast<unsigned long long>(header.page_count) * tiles_per_page);
    return 0;
}

int check_archive(const std::string& path, app::ProgressBar& bar) {
    const BakedTextureArchive file(path);
    file.check_all([&](double fraction) { bar.update(fraction, "checking pages"); });
    bar.finish("checked");
    const TextureShape shape = file.shape();
    const PageArchiveShape archive = file.archive().shape();
    const TextureSampling sampling = file.sampling();
    std::printf(
        "%s: ok: version %u, %u x %u, %s, %llu pages, %llu tiles checked; address %s x "
        "%s, %s\n",
        path.c_str(), file.version(), shape.width, shape.height, tile_format_name(shape.format),
        static_cast<unsigned long long>(archive.page_count),
        static_cast<unsigned long long>(archive.page_count) * archive.tiles_per_page,
        address_mode_name(sampling.address_u).data(), address_mode_name(sampling.address_v).data(),
        color_space_name(sampling.color_space).data());
    return 0;
}

int check(const std::string& path, bool quiet) {
    app::ProgressBar bar({.enabled = !quiet});
    try {
        return baked_file_version(path) == 1 ? check_v1(path, bar) : check_archive(path, bar);
    } catch (const Error& error) {
        bar.end();
        return fail(path, error);
    }
}

int write_procedural(const std::string& path, std::uint32_t size_log2, std::uint32_t seed,
                     bool quiet) {
    const ProceduralSource source({seed, size_log2});
    const std::uint32_t size = 1u << size_log2;
    const TextureLayout layout = source.layout();
    std::vector<std::uint8_t> image(std::size_t(size) * size * 4);
    std::vector<std::byte> tile(tile_bytes);
    app::ProgressBar bar({.enabled = !quiet});
    const std::uint32_t tiles = layout.mips[0].tiles_x;
    for (std::uint32_t ty = 0; ty < tiles; ++ty) {
        for (std::uint32_t tx = 0; tx < tiles; ++tx) {
            source.fill_tile(0, tx, ty, tile);
            for (std::uint32_t y = 0; y < tile_payload && ty * tile_payload + y < size; ++y) {
                for (std::uint32_t x = 0; x < tile_payload && tx * tile_payload + x < size; ++x) {
                    std::memcpy(&image[(std::size_t(ty * tile_payload + y) * size +
                                        std::size_t(tx) * tile_payload + x) *
                                       4],
                                &tile[texel_offset(x + tile_border, y + tile_border)], 4);
                }
            }
        }
        bar.update(double(ty + 1) / tiles, "generating");
    }
    bar.finish("generated");
    if (!stbi_write_png(path.c_str(), int(size), int(size), 4, image.data(), int(size) * 4)) {
        return fail(path, "cannot write the PNG");
    }
    std::printf("%s: procedural texture, seed %u, %u x %u texels\n", path.c_str(), seed, size,
                size);
    return 0;
}

}  // namespace

static int run(int argc, char** argv) {
    CLI::App app{"vtpage-bake: bake an image into a virtual texture file, or check one", program};
    std::string input, output, check_path, procedural_path;
    std::uint32_t size_log2 = 9, seed = 1;
    BakeFlags flags;
    app.add_option("image", input, "The image to bake (any format libvips reads)");
    app.add_option("-o,--output", output, "The baked file to write");
    app.add_option("--check", check_path, "Verify a baked file (header, table, every tile)");
    app.add_option("--procedural", procedural_path,
                   "Write mip 0 of the procedural texture to this PNG");
    app.add_option("--size-log2", size_log2, "With --procedural: 2^N texels on a side")
        ->check(app::count_in(0, 14));
    app.add_option("--seed", seed, "With --procedural: the texture's seed")
        ->check(app::any_count<std::uint32_t>());
    app.add_option("--format", flags.format,
                   "Tile format: rgba8, bc1, bc3, bc4, bc5, or auto (bc3 with alpha, bc4 for one "
                   "grey channel, bc1 otherwise)")
        ->check(CLI::IsMember({"auto", "rgba8", "bc1", "bc3", "bc4", "bc5"}))
        ->capture_default_str();
    app.add_option("--quality", flags.quality,
                   "Block encoding: fast (range fit, the default) or good (cluster fit: about 1.5 "
                   "dB better, 40x slower)")
        ->check(CLI::IsMember({"fast", "good"}))
        ->capture_default_str();
    app.add_option("--max-output-gib", flags.max_output_gib,
                   "Refuse to bake a file that could take more than this many GiB, pages stored "
                   "raw (checked before decoding)")
        ->check(app::number_in(0.001, 1 << 20))
        ->capture_default_str();
    app.add_option("--max-memory-gib", flags.max_memory_gib,
                   "Refuse an image whose bake would need more than this many GiB (the loader's "
                   "whole frame where the format has one, and the bake's rows and pages; checked "
                   "from the header), and hold the process to about that much")
        ->check(app::number_in(0.25, 1 << 20))
        ->capture_default_str();
    app.add_option("--threads", flags.threads, "Threads encoding tiles (default: one per core)")
        ->check(app::count_in(1, 1024));
    app.add_option("--zstd-level", flags.zstd_level,
                   "zstd level of the pages (1 fastest .. 19 smallest; -1 .. -10 are zstd's fast "
                   "levels: larger pages that decode faster)")
        ->check(app::integer_in(vt::page_archive_fastest_zstd_level,
                                vt::page_archive_smallest_zstd_level))
        ->check(app::not_zero())
        ->capture_default_str();
    app.add_option("--parts-per-page", flags.parts_per_page,
                   "zstd frames a page is stored in, decoded on as many threads at once (the "
                   "most up to this that are whole tiles)")
        ->check(app::count_in(1, vt::page_archive_max_parts_per_page))
        ->capture_default_str();
    app.add_option("--address-u", flags.address_u,
                   "Address mode along u: clamp (to edge), repeat or mirror (mirrored repeat); "
                   "recorded in the file, and the tiles' borders at the texture's edges hold what "
                   "the mode samples there (the opposite edge for repeat)")
        ->check(CLI::IsMember({"clamp", "repeat", "mirror"}))
        ->capture_default_str();
    app.add_option("--address-v", flags.address_v, "Address mode along v, as --address-u")
        ->check(CLI::IsMember({"clamp", "repeat", "mirror"}))
        ->capture_default_str();
    auto* srgb = app.add_flag("--srgb", flags.srgb,
                              "The colour channels are sRGB-encoded: recorded so, and the levels "
                              "filtered in linear light (the default for rgba8, bc1 and bc3; "
                              "refused for bc4 and bc5)");
    app.add_flag("--linear", flags.linear,
                 "The texels are values (data, normals, linear colour): recorded so, and the "
                 "levels filtered as stored (always so for bc4 and bc5)")
        ->excludes(srgb);
    app.add_flag("--allow-untrusted-loaders", flags.allow_untrusted,
                 "Also read the formats libvips marks untrusted (SVG, PDF, EXR, HDR, PPM/PGM, "
                 "BMP, PSD, FITS, JPEG 2000, JPEG XL, ...): they are neither fuzzed nor bounded "
                 "in memory; for images you trust");
    app.add_flag("-q,--quiet", flags.quiet, "No progress bar");
    app.footer(
        "Exit status: 0 done; 1 a failure of the work (an output that cannot be written), or "
        "SIGINT/SIGTERM (the partial file is removed); 2 bad flags or bad input (an image that "
        "is missing, corrupt, of a blocked format or past --max-output-gib or --max-memory-gib; "
        "an output that is a folder, a device or the image).");
    if (auto status = app::parse_command_line(app, argc, argv, [&] {
            const int modes =
                int(!input.empty()) + int(!check_path.empty()) + int(!procedural_path.empty());
            if (modes != 1) {
                throw CLI::ValidationError(
                    "give one of: an image to bake, --check FILE, --procedural PNG");
            }
            if (!input.empty() && output.empty()) {
                throw CLI::RequiredError("-o,--output (where to write the baked file)");
            }
        })) {
        return *status;
    }
    app::remove_partial_files_on_interrupt(program);
    try {
        if (!check_path.empty()) return check(check_path, flags.quiet);
        if (!procedural_path.empty())
            return write_procedural(procedural_path, size_log2, seed, flags.quiet);
        return bake_image(input, output, flags);
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
