// vtpage-bake: turns a PNG or JPEG into a baked virtual texture (tiled, mip-mapped, bordered,
// checksummed; see vtpage/streaming/baked_texture.hpp), or checks a baked file.
//
//   vtpage-bake photo.png -o photo.vtex      bake
//   vtpage-bake --check photo.vtex           verify every byte; exit 2 with the problem if corrupt
//   vtpage-bake --procedural out.png --size-log2 9 --seed 7
//                                            write mip 0 of the procedural texture as a PNG
//
// Exit status: 0 done, 1 an unexpected failure (or a file that cannot be written), 2 bad flags or
// bad input (a missing, unreadable, corrupt or oversized image, or not a regular file). The
// message names the file it is about: the image for an input problem, the output for a write.
// The shape of the image and the size of the file it would make are checked from the image's
// header, before anything is decoded or allocated (--max-output-gib, --max-padding).
#include <stb_image_write.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "image_input.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/app/numeric_options.hpp"
#include "vtpage/app/progress_bar.hpp"
#include "vtpage/streaming/baked_texture.hpp"
#include "vtpage/streaming/procedural_source.hpp"

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

// The image, once its shape is known to bake within the settings' limits; errors name it.
std::optional<RgbaImage> load(const std::string& input, const BakeSettings& settings, int& status) {
    try {
        const bake::ImageLimits limits;
        const std::vector<std::uint8_t> bytes = bake::read_image_file(input, limits);
        const bake::ImageSize size = bake::image_size(bytes, limits);
        check_bake_shape(size.width, size.height, settings);
        return bake::decode_image(bytes, limits);
    } catch (const Error& error) {
        status = fail(input, error);
        return std::nullopt;
    }
}

int bake_image(const std::string& input, const std::string& output, BakeSettings settings,
               bool quiet) {
    int status = 0;
    const std::optional<RgbaImage> image = load(input, settings, status);
    if (!image) return status;
    app::ProgressBar bar({.enabled = !quiet});
    settings.progress = [&](double fraction, std::string_view stage) {
        bar.update(fraction, stage);
    };
    try {
        bake_texture(*image, output, settings);
    } catch (const Error& error) {
        bar.end();
        return fail(output, error, /*writing=*/true);
    }
    bar.finish("baked");
    const BakedTextureFile file(output);
    const BakedHeader& header = file.header();
    std::printf("%s: %ux%u image -> %u x %u texels (2^%u), %u mips, %llu pages, %.1f MiB\n",
                output.c_str(), header.source_width, header.source_height, 1u << header.size_log2,
                1u << header.size_log2, header.size_log2, header.size_log2 + 1,
                static_cast<unsigned long long>(header.page_count),
                double(header.file_bytes) / double(1 << 20));
    return 0;
}

int check(const std::string& path, bool quiet) {
    app::ProgressBar bar({.enabled = !quiet});
    try {
        const BakedTextureFile file(path);
        file.check_all([&](double fraction) { bar.update(fraction, "checking tiles"); });
        bar.finish("checked");
        const BakedHeader& header = file.header();
        std::printf("%s: ok: 2^%u texels, %llu pages, %llu tiles checked\n", path.c_str(),
                    header.size_log2, static_cast<unsigned long long>(header.page_count),
                    static_cast<unsigned long long>(header.page_count * tiles_per_page));
        return 0;
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
                    std::memcpy(
                        &image[(std::size_t(ty * tile_payload + y) * size + tx * tile_payload + x) *
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

int main(int argc, char** argv) {
    CLI::App app{"vtpage-bake: bake a PNG or JPEG into a virtual texture file, or check one",
                 program};
    std::string input, output, check_path, procedural_path;
    std::uint32_t size_log2 = 9, seed = 1;
    double max_output_gib = 16;
    BakeSettings settings;
    bool quiet = false;
    app.add_option("image", input, "PNG or JPEG to bake")->check(CLI::ExistingFile);
    app.add_option("-o,--output", output, "The baked file to write");
    app.add_option("--check", check_path, "Verify a baked file (header, table, every tile)");
    app.add_option("--procedural", procedural_path,
                   "Write mip 0 of the procedural texture to this PNG");
    app.add_option("--size-log2", size_log2, "With --procedural: 2^N texels on a side")
        ->check(app::count_in(0, 14));
    app.add_option("--seed", seed, "With --procedural: the texture's seed")
        ->check(app::any_count<std::uint32_t>());
    app.add_option("--max-output-gib", max_output_gib,
                   "Refuse to bake a file larger than this many GiB (checked before decoding)")
        ->check(app::number_in(0.001, 1 << 20))
        ->capture_default_str();
    app.add_option("--max-padding", settings.max_padding_factor,
                   "Refuse an image whose power-of-two square would hold more than N times its "
                   "texels (a thin strip pads to a huge square)")
        ->check(app::count_in(1, std::uint64_t(1) << 40))
        ->capture_default_str();
    app.add_flag("-q,--quiet", quiet, "No progress bar");
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
    try {
        if (!check_path.empty()) return check(check_path, quiet);
        if (!procedural_path.empty())
            return write_procedural(procedural_path, size_log2, seed, quiet);
        settings.max_output_bytes = std::uint64_t(max_output_gib * double(1 << 30));
        return bake_image(input, output, settings, quiet);
    } catch (const std::exception& error) {
        return app::report(program, app::exit_failure, error.what());
    }
}
