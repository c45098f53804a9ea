// in_process_baker: libvips and the baker in this process.
#include <optional>

#include "scene/scene_image_baker.hpp"
#include "texture_baker.hpp"
#include "vips_image_reader.hpp"
#include "vtpage/base/error.hpp"

namespace vtpage::viewer {

namespace {

// What the bake's errors about its input say, with the code where the detail does not.
std::string describe(const Error& error) {
    switch (error.code()) {
        case Errc::io_error:
            return "cannot be read: " + error.detail();
        case Errc::corrupt_data:
            return "is not an image that can be read: " + error.detail();
        case Errc::invalid_argument:
            return "cannot be baked: " + error.detail();
        default:
            return std::string(to_string(error.code())) + ": " + error.detail();
    }
}

bake::VipsImageReader open_image(const SceneImageBake& job) {
    if (job.image_file.empty()) return bake::VipsImageReader(std::span(job.image->embedded));
    return bake::VipsImageReader(job.image_file.string());
}

void bake_in_process(const SceneImageBake& job) {
    bake::TextureBakeSettings settings;
    settings.format = job.format;
    settings.sampling = job.sampling;
    settings.quality = job.quality;
    settings.threads = job.threads;
    settings.max_memory_bytes = job.max_memory_bytes;
    std::optional<bake::VipsImageReader> reader;
    try {
        reader.emplace(open_image(job));
        bake::check_bake_limits(reader->info(), settings);
    } catch (const Error& error) {
        throw SceneImageRefused(describe(error));
    }
    try {
        bake::bake_texture_archive(*reader, job.output.string(), settings);
    } catch (const Error& error) {
        // Rows libvips could not decode (a file cut short) are the image's fault.
        if (error.code() == Errc::corrupt_data) throw SceneImageRefused(describe(error));
        throw;
    }
}

}  // namespace

SceneImageBaker in_process_baker() { return bake_in_process; }

}  // namespace vtpage::viewer
